import Mathlib.Tactic

namespace Section05

/-- Theorem 5.1: the sum of two numbers is commutative. -/
theorem add_comm_nat (a b : ℕ) : a + b = b + a := by
  sorry

end Section05
