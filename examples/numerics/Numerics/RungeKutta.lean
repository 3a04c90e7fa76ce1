import Mathlib.Algebra.BigOperators.Fin
import Numerics.Euler

/-!
# Runge–Kutta methods

Butcher tableaux and the first order conditions.
-/

namespace Numerics

/-- An explicit `s`-stage Runge–Kutta method, given by its Butcher tableau. -/
structure ButcherTableau (s : ℕ) where
  A : Fin s → Fin s → ℝ
  b : Fin s → ℝ
  c : Fin s → ℝ

namespace ButcherTableau

variable {s : ℕ} (t : ButcherTableau s)

/-- Order condition 1: the weights sum to one. -/
def Order1 : Prop := ∑ i, t.b i = 1

/-- Order condition 2 (with order 1). -/
def Order2 : Prop := t.Order1 ∧ ∑ i, t.b i * t.c i = 1 / 2

/-- The forward Euler method as a one-stage tableau. -/
def euler : ButcherTableau 1 where
  A := fun _ _ => 0
  b := fun _ => 1
  c := fun _ => 0

theorem euler_order1 : euler.Order1 := by
  simp [Order1, euler]

/-- Theorem 3.1: forward Euler does not have order 2. -/
theorem euler_not_order2 : ¬ euler.Order2 := by
  sorry

/-- Theorem 3.2: the midpoint method has order 2. -/
theorem midpoint_order2 :
    (⟨fun i j => if i = 1 ∧ j = 0 then 1 / 2 else 0, ![0, 1], ![0, 1 / 2]⟩ : ButcherTableau 2).Order2 := by
  constructor
  · sorry
  · sorry

end ButcherTableau

end Numerics
