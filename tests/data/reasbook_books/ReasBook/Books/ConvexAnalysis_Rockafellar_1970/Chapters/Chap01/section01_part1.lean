/-
Copyright (c) 2026 Zichen Wang. All rights reserved.
Released under Apache 2.0 license as described in the file LICENSE.
Authors: Zichen Wang, Wanli Ma, Pengfei Hao, Zaiwen Wen
-/

import Mathlib

section Chap01
section Section01

/-- Text 1.1: A subset `M` of `Real^n` is affine if for all `x, y ∈ M` and all `r : Real`,
`(1 - r) • x + r • y` is in `M`. -/
def IsAffineSet (n : Nat) (M : Set (Fin n -> Real)) : Prop :=
  ∀ x y : Fin n -> Real, x ∈ M -> y ∈ M -> ∀ r : Real, (1 - r) • x + r • y ∈ M

/-- Affine combinations of two points in an affine set are in the set, written as a line map. -/
lemma lineMap_mem_of_isAffineSet {n : Nat} {M : Set (Fin n → Real)}
    (hM : IsAffineSet n M) {x y : Fin n → Real} (hx : x ∈ M) (hy : y ∈ M) (r : Real) :
    AffineMap.lineMap x y r ∈ M := by
  simpa [AffineMap.lineMap_apply_module] using hM x y hx hy r

/-- A three-point affine combination as a line map of two line maps. -/
lemma affine_combo_three_as_double_lineMap {n : Nat} (c : Real) (x y z : Fin n → Real) :
    c • (x - y) + z =
      AffineMap.lineMap (AffineMap.lineMap z x (2 * c))
        (AffineMap.lineMap z y (-2 * c)) (1 / 2 : Real) := by
  ext i
  simp [AffineMap.lineMap_apply_module, sub_eq_add_neg, smul_add, add_smul, smul_smul, add_assoc,
    add_left_comm, add_comm, mul_add, mul_comm, mul_left_comm]
  ring

/-- An affine set is closed under expressions of the form `c • (x - y) + z`. -/
lemma smul_sub_add_mem_of_isAffineSet {n : Nat} {M : Set (Fin n → Real)}
    (hM : IsAffineSet n M) {x y z : Fin n → Real} (hx : x ∈ M) (hy : y ∈ M) (hz : z ∈ M)
    (c : Real) : c • (x - y) + z ∈ M := by
  have hx' : AffineMap.lineMap z x (2 * c) ∈ M :=
    lineMap_mem_of_isAffineSet (n:=n) (M:=M) hM hz hx (2 * c)
  have hy' : AffineMap.lineMap z y (-2 * c) ∈ M :=
    lineMap_mem_of_isAffineSet (n:=n) (M:=M) hM hz hy (-2 * c)
  have h := lineMap_mem_of_isAffineSet (n:=n) (M:=M) hM hx' hy' (1 / 2 : Real)
  simpa [affine_combo_three_as_double_lineMap (n:=n) (c:=c) (x:=x) (y:=y) (z:=z)] using h

/-- Helper lemma: an affine set is the carrier of some affine subspace. -/
theorem isAffineSet_iff_affineSubspace (n : Nat) (M : Set (Fin n -> Real)) :
    IsAffineSet n M ↔ ∃ s : AffineSubspace Real (Fin n -> Real), (s : Set (Fin n -> Real)) = M := by
  constructor
  · intro hM
    refine ⟨{ carrier := M, smul_vsub_vadd_mem := ?_ }, rfl⟩
    intro c p₁ p₂ p₃ hp₁ hp₂ hp₃
    simpa [vsub_eq_sub, vadd_eq_add] using
      (smul_sub_add_mem_of_isAffineSet (n:=n) (M:=M) hM hp₁ hp₂ hp₃ c)
  · rintro ⟨s, rfl⟩
    intro x y hx hy r
    have h := AffineMap.lineMap_mem (Q:=s) r hx hy
    simpa [AffineMap.lineMap_apply_module] using h

/-- Submodules are affine sets. -/
lemma isAffineSet_of_submodule (n : Nat) (S : Submodule Real (Fin n → Real)) :
    IsAffineSet n (S : Set (Fin n → Real)) := by
  intro x y hx hy r
  have hx' : x ∈ S := hx
  have hy' : y ∈ S := hy
  exact S.add_mem (S.smul_mem (1 - r) hx') (S.smul_mem r hy')

/-- An affine set containing the origin is closed under scalar multiplication. -/
lemma affineSet_smul_closed_of_origin {n : Nat} {M : Set (Fin n → Real)}
    (hM : IsAffineSet n M) (h0 : (0 : Fin n → Real) ∈ M) :
    ∀ x ∈ M, ∀ r : Real, r • x ∈ M := by
  intro x hx r
  have h := hM 0 x h0 hx r
  simpa using h

/-- An affine set containing the origin is closed under addition. -/
lemma affineSet_add_closed_of_origin {n : Nat} {M : Set (Fin n → Real)}
    (hM : IsAffineSet n M) (h0 : (0 : Fin n → Real) ∈ M) :
    ∀ x ∈ M, ∀ y ∈ M, x + y ∈ M := by
  intro x hx y hy
  have hmid : (1 - (1 / 2 : Real)) • x + (1 / 2 : Real) • y ∈ M :=
    hM x y hx hy (1 / 2 : Real)
  have hsmul : (2 : Real) • ((1 - (1 / 2 : Real)) • x + (1 / 2 : Real) • y) ∈ M :=
    affineSet_smul_closed_of_origin (n:=n) (M:=M) hM h0 _ hmid (2 : Real)
  have hmul_left : (2 : Real) * (1 - (2⁻¹ : Real)) = (1 : Real) := by
    norm_num
  have hmul : (2 : Real) * (2⁻¹ : Real) = (1 : Real) := by
    norm_num
  simpa [smul_add, smul_smul, hmul_left, hmul] using hsmul

/-- An affine set containing the origin is the carrier of a submodule. -/
lemma submodule_of_affineSet_origin (n : Nat) (M : Set (Fin n → Real))
    (hM : IsAffineSet n M) (h0 : (0 : Fin n → Real) ∈ M) :
    ∃ S : Submodule Real (Fin n → Real), (S : Set (Fin n → Real)) = M := by
  refine ⟨{ carrier := M
          , zero_mem' := h0
          , add_mem' := ?_
          , smul_mem' := ?_ }, rfl⟩
  · intro x y hx hy
    exact affineSet_add_closed_of_origin (n:=n) (M:=M) hM h0 x hx y hy
  · intro r x hx
    exact affineSet_smul_closed_of_origin (n:=n) (M:=M) hM h0 x hx r

/-- Theorem 1.1: The subspaces of `Real^n` are exactly the affine sets which contain the origin. -/
theorem subspace_iff_affineSet_and_origin (n : Nat) (M : Set (Fin n -> Real)) :
    (∃ S : Submodule Real (Fin n -> Real), (S : Set (Fin n -> Real)) = M) ↔
      IsAffineSet n M ∧ (0 : Fin n -> Real) ∈ M := by
  constructor
  · rintro ⟨S, rfl⟩
    refine ⟨isAffineSet_of_submodule n S, ?_⟩
    exact S.zero_mem
  · rintro ⟨hM, h0⟩
    exact submodule_of_affineSet_origin n M hM h0
