import Mathlib

open scoped BigOperators

/-- Definition 1.1.1 (Classical complexity benchmark for subgradient schemes).
A classical worst-case iteration-complexity estimate for subgradient-type schemes for non-smooth
convex minimization in the black-box oracle model is of order O(1/eps^2) (equation (1.1)), where
eps > 0 is the desired absolute accuracy in objective value. -/
def ClassicalSubgradientComplexityBenchmark (iter : ℝ → ℝ) : Prop :=
  ∃ C > 0, ∀ eps > 0, iter eps ≤ C / (eps ^ 2)

/-- Definition 1.1.2 (Constructive lower-bound illustration in the black-box model).
In the black-box oracle model for non-smooth convex minimization, a cited hard instance is the
problem of minimizing `x ↦ max_{1 ≤ i ≤ n} x i` subject to `∑ i, (x i)^2 ≤ 1`
(equation (1.1) and (eq:intro:hard_instance)). -/
noncomputable def HardInstanceProblem (n : ℕ) :
    Set (Fin n → ℝ) × ((Fin n → ℝ) → ℝ) :=
  ({x | ∑ i, (x i)^2 ≤ (1 : ℝ)}, fun x => sSup (Set.range x))

/-- Definition 1.1.3 (Complexity benchmark for smooth convex minimization).
For minimizing a convex function with L-Lipschitz continuous gradient by an optimal first-order
method, the cited iteration complexity estimate is O(√(L/eps)) (equation
(eq:intro:smooth_complexity)) for reaching absolute accuracy eps > 0 in objective value. -/
def SmoothConvexComplexityBenchmark (L : ℝ) (iter : ℝ → ℝ) : Prop :=
  ∃ C > 0, ∀ eps > 0, iter eps ≤ C * Real.sqrt (L / eps)

/-- Definition 1.1.4 (Spaces, duals, and pairing).
Let `E` be a finite-dimensional real normed vector space and let `E*` be the dual space of linear
functionals on `E` (mathlib `Module.Dual`). For `s ∈ E*` and `x ∈ E`, the pairing `⟪s, x⟫` is the
value `s x`. When an inner product is used, the same bracket notation is employed, with an index
when needed. -/
def DualPairing {E : Type*} [SeminormedAddCommGroup E] [NormedSpace ℝ E]
    [FiniteDimensional ℝ E]
    (s : Module.Dual ℝ E) (x : E) : ℝ :=
  s x

/-- Definition 1.1.5 (Dual norm).
Given a norm `‖·‖` on `E`, the dual norm `‖·‖_*` on `E*` is defined by
`‖s‖_* = max { ⟪s, x⟫ : x ∈ E, ‖x‖ = 1 }` (equation (eq:dual_norm_def)). -/
noncomputable def DualNormDef {E : Type*} [SeminormedAddCommGroup E] [NormedSpace ℝ E]
    [FiniteDimensional ℝ E] (s : Module.Dual ℝ E) : ℝ :=
