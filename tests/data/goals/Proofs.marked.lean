theorem foo (n : Nat) (h : 0 < n) : n + 0 = n ∧ True := by
  trace "autoformalize goals l2 0"
  trace_state
  trace "autoformalize goals l2 0 end"
  constructor
  trace "autoformalize goals l2 1"
  trace_state
  trace "autoformalize goals l2 1 end"
  trace "autoformalize goals l3 0"
  trace_state
  trace "autoformalize goals l3 0 end"
  · simp
  trace "autoformalize goals l3 1"
  trace_state
  trace "autoformalize goals l3 1 end"
  · trivial

theorem bar (a b : Nat) : a + b = b + a := by
  trace "autoformalize goals l6 0"
  trace_state
  trace "autoformalize goals l6 0 end"
  trace "autoformalize goals l7 0"
  trace_state
  trace "autoformalize goals l7 0 end"
  omega
  trace "autoformalize goals l7 1"
  trace_state
  trace "autoformalize goals l7 1 end"

theorem baz (n : Nat) : 0 + n = n := by
  trace "autoformalize goals l10 0"
  trace_state
  trace "autoformalize goals l10 0 end"
  induction n with
  | zero => rfl
  | succ k ih =>
    trace "autoformalize goals l12 0"
    trace_state
    trace "autoformalize goals l12 0 end"
    have step : 0 + (k + 1) = (0 + k) + 1 := by
      trace "autoformalize goals l13 0"
      trace_state
      trace "autoformalize goals l13 0 end"
      trace "autoformalize goals l14 0"
      trace_state
      trace "autoformalize goals l14 0 end"
      rfl
      trace "autoformalize goals l14 1"
      trace_state
      trace "autoformalize goals l14 1 end"
    trace "autoformalize goals l15 0"
    trace_state
    trace "autoformalize goals l15 0 end"
    rw [step, ih]
    trace "autoformalize goals l15 1"
    trace_state
    trace "autoformalize goals l15 1 end"
  trace "autoformalize goals l10 1"
  trace_state
  trace "autoformalize goals l10 1 end"

theorem bad (n : Nat) : n = n + 0 := by
  trace "autoformalize goals l18 0"
  trace_state
  trace "autoformalize goals l18 0 end"
  exact Nat.lt_irrefl n
  trace "autoformalize goals l18 1"
  trace_state
  trace "autoformalize goals l18 1 end"
  trace "autoformalize goals l19 0"
  trace_state
  trace "autoformalize goals l19 0 end"
  rfl
  trace "autoformalize goals l19 1"
  trace_state
  trace "autoformalize goals l19 1 end"

/-- doc -/
theorem last (p : Prop) (hp : p) : p ∧ p := by
  trace "autoformalize goals l23 0"
  trace_state
  trace "autoformalize goals l23 0 end"
  exact ⟨hp, hp⟩
  trace "autoformalize goals l23 1"
  trace_state
  trace "autoformalize goals l23 1 end"
