/-
Copyright (c) 2026 Zichen Wang. All rights reserved.
Released under Apache 2.0 license as described in the file LICENSE.
Authors: Zichen Wang, Wanli Ma, Xuran Sun, Zaiwen Wen
-/

import Mathlib

import Books.ConvexAnalysis_Rockafellar_1970.Chapters.Chap01.section04_part4

open Matrix
open scoped BigOperators
open scoped Topology

section Chap01
section Section04
open scoped BigOperators

/-- Corollary 4.7.2: If `f` is a positively homogeneous proper convex function, then
`f (-x) ≥ -f x` for every `x`. -/
lemma convexFunction_neg_ge_neg_of_posHom_proper {n : Nat}
    {f : (Fin n → Real) → EReal}
    (hpos : PositivelyHomogeneous f)
    (hproper : ProperConvexFunctionOn (Set.univ) f) :
    ∀ x : Fin n → Real, f (-x) ≥ -f x := by
  intro x
  have hsub := subadditive_of_posHom_proper (hpos := hpos) (hproper := hproper)
  have h0le : (0 : EReal) ≤ f 0 :=
    posHom_zero_nonneg (hpos := hpos) (hproper := hproper)
  have hxbot : f x ≠ (⊥ : EReal) := hproper.2.2 x (by simp)
  have hxbott : f (-x) ≠ (⊥ : EReal) := hproper.2.2 (-x) (by simp)
  have hsum : (0 : EReal) ≤ f x + f (-x) := by
    have h0 : f 0 ≤ f x + f (-x) := by
      have h := hsub x (-x)
      simpa using h
    exact le_trans h0le h0
  have hneg : -f x ≤ f (-x) :=
    ereal_neg_le_of_add_nonneg (ha := hxbot) (hb := hxbott) hsum
  exact hneg

end Section04
end Chap01
