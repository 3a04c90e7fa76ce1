/-
  Copyright (c) 2026 Zichen Wang. All rights reserved.
  Released under Apache 2.0 license as described in the file LICENSE.
  Authors: Zichen Wang, Wanli Ma, Ziyu Wang, Zaiwen Wen
  -/

import Mathlib

section Chap01
section Section01

/-- Theorem 1.1: summing `(-a i) * b i` gives the negative of the sum of `a i * b i`. -/
lemma sum_neg_mul_eq_neg_sum_mul (n : ℕ) (a b : Fin n → ℝ) :
    Finset.univ.sum (fun i : Fin n => (-a i) * b i) =
      - Finset.univ.sum (fun i : Fin n => a i * b i) := by
  calc
    Finset.univ.sum (fun i : Fin n => (-a i) * b i)
        = Finset.univ.sum (fun i : Fin n => -(a i * b i)) := by
          simp [neg_mul]
    _ = - Finset.univ.sum (fun i : Fin n => a i * b i) := by
          simp

/-- Theorem 1.1: negation does not change the sum of squares. -/
lemma sum_neg_sq_eq_sum_sq (n : ℕ) (a : Fin n → ℝ) :
    Finset.univ.sum (fun i : Fin n => (-a i) ^ (2 : ℕ)) =
      Finset.univ.sum (fun i : Fin n => (a i) ^ (2 : ℕ)) := by
  refine Finset.sum_congr rfl ?_
  intro i hi
  simp

/-- Theorem 1.1: the upper bound for the Cauchy--Schwarz sum. -/
lemma cauchySchwarz_sum_mul_upper (n : ℕ) (a b : Fin n → ℝ) :
    Finset.univ.sum (fun i : Fin n => a i * b i) ≤
      Real.sqrt (Finset.univ.sum (fun i : Fin n => (a i) ^ (2 : ℕ))) *
        Real.sqrt (Finset.univ.sum (fun i : Fin n => (b i) ^ (2 : ℕ))) := by
  simpa using
    (Real.sum_mul_le_sqrt_mul_sqrt (s := (Finset.univ : Finset (Fin n))) (f := a) (g := b))

/-- Theorem 1.1: the lower bound for the Cauchy--Schwarz sum. -/
lemma cauchySchwarz_sum_mul_lower (n : ℕ) (a b : Fin n → ℝ) :
    -(Real.sqrt (Finset.univ.sum (fun i : Fin n => (a i) ^ (2 : ℕ))) *
        Real.sqrt (Finset.univ.sum (fun i : Fin n => (b i) ^ (2 : ℕ)))) ≤
      Finset.univ.sum (fun i : Fin n => a i * b i) := by
  have h :
      Finset.univ.sum (fun i : Fin n => (-a i) * b i) ≤
        Real.sqrt (Finset.univ.sum (fun i : Fin n => (-a i) ^ (2 : ℕ))) *
          Real.sqrt (Finset.univ.sum (fun i : Fin n => (b i) ^ (2 : ℕ))) := by
    simpa using
      (Real.sum_mul_le_sqrt_mul_sqrt (s := (Finset.univ : Finset (Fin n)))
        (f := fun i : Fin n => -a i) (g := b))
  have h' :
      - Finset.univ.sum (fun i : Fin n => a i * b i) ≤
        Real.sqrt (Finset.univ.sum (fun i : Fin n => (a i) ^ (2 : ℕ))) *
          Real.sqrt (Finset.univ.sum (fun i : Fin n => (b i) ^ (2 : ℕ))) := by
    simpa [sum_neg_mul_eq_neg_sum_mul, sum_neg_sq_eq_sum_sq] using h
  have h'' := neg_le_neg h'
  simpa using h''

/-- Theorem 1.1: absolute-value form of the finite Cauchy--Schwarz inequality. -/
lemma cauchySchwarz_abs_sum_mul (n : ℕ) (a b : Fin n → ℝ) :
    |Finset.univ.sum (fun i : Fin n => a i * b i)| ≤
      Real.sqrt (Finset.univ.sum (fun i : Fin n => (a i) ^ (2 : ℕ))) *
        Real.sqrt (Finset.univ.sum (fun i : Fin n => (b i) ^ (2 : ℕ))) := by
  refine (abs_le).2 ?_
  constructor
  · exact cauchySchwarz_sum_mul_lower n a b
  · exact cauchySchwarz_sum_mul_upper n a b

/-- Theorem 1.1 (Cauchy--Schwarz inequality): let `n ≥ 1` and `a b : Fin n → ℝ`. Then
`|∑ i, a i * b i| ≤ (∑ i, (a i)^2)^{1/2} * (∑ i, (b i)^2)^{1/2}`. -/
theorem cauchySchwarz_fin_sum_real (n : ℕ) (hn : 1 ≤ n) (a b : Fin n → ℝ) :
    |Finset.univ.sum (fun i : Fin n => a i * b i)| ≤
      Real.sqrt (Finset.univ.sum (fun i : Fin n => (a i) ^ (2 : ℕ))) *
        Real.sqrt (Finset.univ.sum (fun i : Fin n => (b i) ^ (2 : ℕ))) := by
  exact cauchySchwarz_abs_sum_mul n a b
