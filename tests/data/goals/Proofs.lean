theorem foo (n : Nat) (h : 0 < n) : n + 0 = n ∧ True := by
  constructor
  · simp
  · trivial

theorem bar (a b : Nat) : a + b = b + a := by
  omega

theorem baz (n : Nat) : 0 + n = n := by
  induction n with
  | zero => rfl
  | succ k ih =>
    have step : 0 + (k + 1) = (0 + k) + 1 := by
      rfl
    rw [step, ih]

theorem bad (n : Nat) : n = n + 0 := by
  exact Nat.lt_irrefl n
  rfl

/-- doc -/
theorem last (p : Prop) (hp : p) : p ∧ p := by
  exact ⟨hp, hp⟩
