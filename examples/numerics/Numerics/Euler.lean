import Mathlib.Analysis.Calculus.Deriv.Basic

/-!
# The forward Euler method

A small example formalization for trying autoformalize: definitions are in
place, the main results are stated sorry-first.
-/

namespace Numerics

/-- One step of the forward Euler method for `y' = f t y` with step `h`. -/
def eulerStep (f : ℝ → ℝ → ℝ) (h t y : ℝ) : ℝ := y + h * f t y

/-- The Euler iterates from `y₀` at `t₀`. -/
def euler (f : ℝ → ℝ → ℝ) (h t₀ y₀ : ℝ) : ℕ → ℝ
  | 0 => y₀
  | n + 1 => eulerStep f h (t₀ + n * h) (euler f h t₀ y₀ n)

@[simp] theorem euler_zero (f : ℝ → ℝ → ℝ) (h t₀ y₀ : ℝ) : euler f h t₀ y₀ 0 = y₀ := rfl

/-- Definition 2.1 (consistency): the local error of one step is `o(h)`. -/
theorem eulerStep_consistent (f : ℝ → ℝ → ℝ) (y : ℝ → ℝ) (t : ℝ)
    (hy : HasDerivAt y (f t (y t)) t) :
    Filter.Tendsto (fun h => (y (t + h) - eulerStep f h t (y t)) / h)
      (nhdsWithin 0 {0}ᶜ) (nhds 0) := by
  sorry

/-- Theorem 2.2: for a constant right-hand side, Euler's method is exact. -/
theorem euler_const (c h t₀ y₀ : ℝ) (n : ℕ) : euler (fun _ _ => c) h t₀ y₀ n = y₀ + n * h * c := by
  sorry

end Numerics
