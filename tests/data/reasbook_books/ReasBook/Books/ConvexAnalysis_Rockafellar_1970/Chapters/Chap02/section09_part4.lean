/-
Copyright (c) 2026 Zichen Wang. All rights reserved.
Released under Apache 2.0 license as described in the file LICENSE.
Authors: Zichen Wang, Wanli Ma, Qiming Dai, Zaiwen Wen
-/

import Mathlib
import Books.ConvexAnalysis_Rockafellar_1970.Chapters.Chap02.section09_part3

noncomputable section
open scoped Pointwise
open scoped BigOperators
open scoped Topology
open scoped RealInnerProductSpace

section Chap02
section Section09

/-- Membership in the kernel of `linearMap_prod` is componentwise. -/
lemma mem_ker_linearMap_prod_iff {n m : Nat}
    (A : (Fin n → Real) →ₗ[Real] (Fin m → Real)) (p : (Fin n → Real) × Real) :
    p ∈ LinearMap.ker (linearMap_prod A) ↔ A p.1 = 0 ∧ p.2 = 0 := by
  constructor
  · intro hp
    have hmap : linearMap_prod A p = 0 := by
      simpa using hp
    have hmap1 : A p.1 = 0 := by
      have h := congrArg Prod.fst hmap
      simpa [linearMap_prod] using h
    have hmap2 : p.2 = 0 := by
      have h := congrArg Prod.snd hmap
      simpa [linearMap_prod] using h
    exact ⟨hmap1, hmap2⟩
  · rintro ⟨h1, h2⟩
    have hmap : linearMap_prod A p = 0 := by
      ext <;> simp [linearMap_prod, h1, h2]
    simpa using hmap

/-- Recession cones commute with linear equivalences. -/
lemma recessionCone_image_linearEquiv {E F : Type*} [AddCommGroup E] [Module Real E]
    [AddCommGroup F] [Module Real F] (e : E ≃ₗ[Real] F) (C : Set E) :
    Set.recessionCone (e '' C) = e '' Set.recessionCone C := by
  ext y
  constructor
  · intro hy
    have hy' : e.symm y ∈ Set.recessionCone C := by
      intro x hx t ht
      have hx' : e x ∈ e '' C := ⟨x, hx, rfl⟩
      have hmem : e x + t • y ∈ e '' C := hy hx' ht
      have hmem' : e (x + t • e.symm y) ∈ e '' C := by
        have hmap : e (x + t • e.symm y) = e x + t • y := by
          simp
        simpa [hmap] using hmem
      rcases hmem' with ⟨x', hx', hx'eq⟩
      have hx'eq' : x' = x + t • e.symm y := e.injective hx'eq
      simpa [hx'eq'] using hx'
    refine ⟨e.symm y, hy', by simp⟩
  · rintro ⟨z, hz, rfl⟩
    intro x hx t ht
    rcases hx with ⟨x', hx', rfl⟩
    have hmem : x' + t • z ∈ C := hz hx' ht
    refine ⟨x' + t • z, hmem, ?_⟩
    simp

/-- The recession cone of the embedded epigraph is the embedded epigraph of `h0_plus`. -/
lemma recessionCone_embedded_epigraph_eq_epigraph_h0_plus {n : Nat}
    {h h0_plus : (Fin n → Real) → EReal}
    (hrec :
      Set.recessionCone (epigraph (Set.univ : Set (Fin n → Real)) h) =
        epigraph (Set.univ : Set (Fin n → Real)) h0_plus) :
    Set.recessionCone
        ((prodLinearEquiv_append (n := n)) ''
          epigraph (Set.univ : Set (Fin n → Real)) h) =
      (prodLinearEquiv_append (n := n)) ''
        epigraph (Set.univ : Set (Fin n → Real)) h0_plus := by
  calc
    Set.recessionCone
        ((prodLinearEquiv_append (n := n)) ''
          epigraph (Set.univ : Set (Fin n → Real)) h) =
        (prodLinearEquiv_append (n := n)) ''
          Set.recessionCone (epigraph (Set.univ : Set (Fin n → Real)) h) := by
      exact
        (recessionCone_image_linearEquiv (e := prodLinearEquiv_append (n := n))
          (C := epigraph (Set.univ : Set (Fin n → Real)) h))
    _ =
        (prodLinearEquiv_append (n := n)) ''
          epigraph (Set.univ : Set (Fin n → Real)) h0_plus := by
      simp [hrec]

/-- Corollary 4.7.2 specialized to `h0_plus`. -/
lemma h0_plus_neg_ge_neg_of_posHom_proper {n : Nat}
    {h0_plus : (Fin n → Real) → EReal}
    (hpos : PositivelyHomogeneous h0_plus)
    (hproper : ProperConvexFunctionOn (Set.univ : Set (Fin n → Real)) h0_plus) :
    ∀ z : Fin n → Real, h0_plus (-z) ≥ -h0_plus z := by
  intro z
  exact convexFunction_neg_ge_neg_of_posHom_proper (hpos := hpos) (hproper := hproper) z
