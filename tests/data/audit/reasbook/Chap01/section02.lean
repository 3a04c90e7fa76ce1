/-
  Copyright (c) 2026 Zichen Wang. All rights reserved.
  Released under Apache 2.0 license as described in the file LICENSE.
  Authors: Zichen Wang, Wanli Ma, Ziyu Wang, Zaiwen Wen
  -/

import Mathlib

section Chap01
section Section02

/-- Definition 1.10 (Balls): Let `(X,d)` be a metric space, let `x0 ∈ X`, and let `r > 0`.
The (open) ball in `X` centered at `x0` with radius `r` is the set
`B_{(X,d)}(x0,r) = {x ∈ X : d(x,x0) < r}`. -/
abbrev openBall (X : Type*) [MetricSpace X] (x0 : X) (r : Real) : Set X :=
  Metric.ball x0 r

/-- Definition 1.11 (Interior/exterior/boundary points): Let `(X,d)` be a metric space and `E ⊆ X`.
(1) `x ∈ X` is an interior point of `E` iff there exists `r > 0` with `B(x,r) ⊆ E`.
(2) `x ∈ X` is an exterior point of `E` iff there exists `r > 0` with `B(x,r) ⊆ Eᶜ`.
(3) `x ∈ X` is a boundary point of `E` iff for every `r > 0`, both `B(x,r) ∩ E ≠ ∅`
and `B(x,r) ∩ Eᶜ ≠ ∅`. -/
def IsInteriorPoint {X : Type*} [MetricSpace X] (E : Set X) (x : X) : Prop :=
  ∃ r : ℝ, 0 < r ∧ Metric.ball x r ⊆ E

/-- A point is an exterior point of `E` if some positive ball around it is contained in `Eᶜ`. -/
def IsExteriorPoint {X : Type*} [MetricSpace X] (E : Set X) (x : X) : Prop :=
  ∃ r : ℝ, 0 < r ∧ Metric.ball x r ⊆ Eᶜ

/-- A point is a boundary point of `E` if every positive ball meets both `E` and `Eᶜ`. -/
def IsBoundaryPoint {X : Type*} [MetricSpace X] (E : Set X) (x : X) : Prop :=
  ∀ r : ℝ, 0 < r →
    ((Metric.ball x r) ∩ E).Nonempty ∧ ((Metric.ball x r) ∩ Eᶜ).Nonempty

/-- Interior points defined via balls coincide with membership in `interior`. -/
lemma isInteriorPoint_iff_mem_interior {X : Type*} [MetricSpace X] (E : Set X) (x : X) :
    IsInteriorPoint E x ↔ x ∈ interior E :=
by
  rw [mem_interior_iff_mem_nhds]
  simpa [IsInteriorPoint] using
    (Metric.mem_nhds_iff (x := x) (s := E)).symm

/-- Exterior points defined via balls coincide with membership in `interior` of the complement. -/
lemma isExteriorPoint_iff_mem_interior_compl {X : Type*} [MetricSpace X] (E : Set X) (x : X) :
    IsExteriorPoint E x ↔ x ∈ interior (Eᶜ) :=
by
  simpa [IsExteriorPoint, IsInteriorPoint] using
    (isInteriorPoint_iff_mem_interior (E := Eᶜ) (x := x))

/-- Characterize closure via nonempty intersections of all positive balls. -/
lemma mem_closure_iff_forall_ball_inter_nonempty {X : Type*} [MetricSpace X] (s : Set X) (x : X) :
    x ∈ closure s ↔ ∀ r : ℝ, 0 < r → ((Metric.ball x r) ∩ s).Nonempty :=
by
  constructor
  · intro hx r hr
    rcases (Metric.mem_closure_iff.mp hx) r hr with ⟨y, hy_s, hy_dist⟩
    have hy_ball : y ∈ Metric.ball x r := Metric.mem_ball'.2 hy_dist
    refine ⟨y, ?_⟩
    exact ⟨hy_ball, hy_s⟩
  · intro hx
    apply Metric.mem_closure_iff.mpr
    intro r hr
    rcases hx r hr with ⟨y, hy⟩
    rcases hy with ⟨hy_ball, hy_s⟩
    have hy_dist : dist x y < r := Metric.mem_ball'.1 hy_ball
    exact ⟨y, hy_s, hy_dist⟩

/-- Boundary points are exactly those in the closures of the set and its complement. -/
lemma isBoundaryPoint_iff_mem_closure_inter_closure_compl {X : Type*} [MetricSpace X]
    (E : Set X) (x : X) :
    IsBoundaryPoint E x ↔ x ∈ closure E ∩ closure (Eᶜ) :=
by
  constructor
  · intro hx
    have hxE : x ∈ closure E := by
      apply (mem_closure_iff_forall_ball_inter_nonempty (s := E) (x := x)).2
      intro r hr
      exact (hx r hr).1
    have hxEc : x ∈ closure (Eᶜ) := by
      apply (mem_closure_iff_forall_ball_inter_nonempty (s := Eᶜ) (x := x)).2
      intro r hr
      exact (hx r hr).2
    exact ⟨hxE, hxEc⟩
  · intro hx
    rcases hx with ⟨hxE, hxEc⟩
    intro r hr
    have hE : ((Metric.ball x r) ∩ E).Nonempty :=
      (mem_closure_iff_forall_ball_inter_nonempty (s := E) (x := x)).1 hxE r hr
    have hEc : ((Metric.ball x r) ∩ Eᶜ).Nonempty :=
      (mem_closure_iff_forall_ball_inter_nonempty (s := Eᶜ) (x := x)).1 hxEc r hr
    exact ⟨hE, hEc⟩

/-- Boundary points defined via balls coincide with membership in `frontier`. -/
lemma isBoundaryPoint_iff_mem_frontier {X : Type*} [MetricSpace X] (E : Set X) (x : X) :
    IsBoundaryPoint E x ↔ x ∈ frontier E :=
by
  simpa [frontier_eq_closure_inter_closure] using
    (isBoundaryPoint_iff_mem_closure_inter_closure_compl (E := E) (x := x))

/-- Definition 1.12 (Interior, exterior, boundary): Let `(X,d)` be a metric space and `E ⊆ X`.
(1) `x ∈ X` is an interior point of `E` iff there exists `r > 0` with `B(x,r) ⊆ E`.
(2) `x ∈ X` is an exterior point of `E` iff there exists `r > 0` with `B(x,r) ∩ E = ∅`.
(3) `x ∈ X` is a boundary point of `E` iff it is neither interior nor exterior.
The interior (resp. exterior, boundary) of `E` is the set of all interior (resp. exterior, boundary) points. -/
def interiorSet {X : Type*} [MetricSpace X] (E : Set X) : Set X :=
  {x | IsInteriorPoint E x}

/-- The exterior set of `E` as the set of exterior points. -/
def exteriorSet {X : Type*} [MetricSpace X] (E : Set X) : Set X :=
  {x | IsExteriorPoint E x}

/-- The boundary set of `E` as the set of points that are neither interior nor exterior. -/
def boundarySet {X : Type*} [MetricSpace X] (E : Set X) : Set X :=
  {x | ¬ IsInteriorPoint E x ∧ ¬ IsExteriorPoint E x}

/-- The book's interior set agrees with `interior`. -/
lemma interiorSet_eq_interior {X : Type*} [MetricSpace X] (E : Set X) :
    interiorSet E = interior E :=
by
  ext x
  simpa [interiorSet] using (isInteriorPoint_iff_mem_interior (E := E) (x := x))

/-- The book's exterior set agrees with `interior (Eᶜ)`. -/
lemma exteriorSet_eq_interior_compl {X : Type*} [MetricSpace X] (E : Set X) :
    exteriorSet E = interior (Eᶜ) :=
by
  ext x
  simpa [exteriorSet] using
    (isExteriorPoint_iff_mem_interior_compl (E := E) (x := x))

/-- The book's boundary set agrees with `frontier`. -/
lemma boundarySet_eq_frontier {X : Type*} [MetricSpace X] (E : Set X) :
    boundarySet E = frontier E :=
by
  ext x
  simp [boundarySet, frontier_eq_inter_compl_interior, isInteriorPoint_iff_mem_interior,
    isExteriorPoint_iff_mem_interior_compl]

/-- Proposition 1.11: Let `(X,d)` be a metric space and `E ⊆ X`. Define
`int(E) = {x ∈ X : ∃ r > 0, B(x,r) ⊆ E}`, `ext(E) = int(X \ E)`, and
`∂E = X \ (int(E) ∪ ext(E))`, where `B(x,r) = {y ∈ X : d(x,y) < r}`. Then:
(1) If `x0 ∈ int(E)`, then `x0 ∈ E`.
(2) If `x0 ∈ ext(E)`, then `x0 ∉ E`.
(3) `int(E) ∩ ext(E) = ∅`.
(4) If `x0 ∈ ∂E`, then it is possible that `x0 ∈ E` and it is possible that `x0 ∉ E`. -/
lemma proposition_1_11 {X : Type*} [MetricSpace X] (E : Set X) :
    (∀ x0, x0 ∈ interiorSet E → x0 ∈ E) ∧
    (∀ x0, x0 ∈ exteriorSet E → x0 ∉ E) ∧
    (interiorSet E ∩ exteriorSet E = (∅ : Set X)) ∧
    (∀ x0, x0 ∈ boundarySet E → (x0 ∈ E ∨ x0 ∉ E)) :=
by
  refine And.intro ?h1 ?hrest
  · intro x0 hx0
    rcases hx0 with ⟨r, hrpos, hsubset⟩
    have hxball : x0 ∈ Metric.ball x0 r := Metric.mem_ball_self hrpos
    exact hsubset hxball
  · refine And.intro ?h2 ?hrest2
    · intro x0 hx0
      rcases hx0 with ⟨r, hrpos, hsubset⟩
      have hxball : x0 ∈ Metric.ball x0 r := Metric.mem_ball_self hrpos
      have hxcompl : x0 ∈ Eᶜ := hsubset hxball
      simpa using hxcompl
    · refine And.intro ?h3 ?h4
      · ext x
        constructor
        · intro hx
          rcases hx with ⟨hxI, hxE⟩
          rcases hxI with ⟨rI, hrIpos, hI⟩
          rcases hxE with ⟨rE, hrEpos, hE⟩
          have hxballI : x ∈ Metric.ball x rI := Metric.mem_ball_self hrIpos
          have hxballE : x ∈ Metric.ball x rE := Metric.mem_ball_self hrEpos
          have hxmem : x ∈ E := hI hxballI
          have hxnot : x ∈ Eᶜ := hE hxballE
          have hxnot' : x ∉ E := by
            simpa using hxnot
          exact (hxnot' hxmem).elim
        · intro hx
          cases hx
      · intro x0 hx0
        classical
        exact Classical.em (x0 ∈ E)

/-- If a point lies in the interior set, then it lies in the set. -/
lemma mem_of_mem_interiorSet {X : Type*} [MetricSpace X] {E : Set X} {x0 : X} :
    x0 ∈ interiorSet E → x0 ∈ E :=
by
  intro hx0
  rcases hx0 with ⟨r, hrpos, hsubset⟩
  have hxball : x0 ∈ Metric.ball x0 r := Metric.mem_ball_self hrpos
  exact hsubset hxball

/-- If a point lies in the exterior set, then it is not in the set. -/
lemma mem_compl_of_mem_exteriorSet {X : Type*} [MetricSpace X] {E : Set X} {x0 : X} :
    x0 ∈ exteriorSet E → x0 ∉ E :=
by
  intro hx0
  rcases hx0 with ⟨r, hrpos, hsubset⟩
  have hxball : x0 ∈ Metric.ball x0 r := Metric.mem_ball_self hrpos
  have hxcompl : x0 ∈ Eᶜ := hsubset hxball
  simpa using hxcompl

/-- The interior and exterior sets are disjoint. -/
lemma interiorSet_inter_exteriorSet_eq_empty {X : Type*} [MetricSpace X] (E : Set X) :
    interiorSet E ∩ exteriorSet E = (∅ : Set X) :=
by
  ext x
  constructor
  · intro hx
    rcases hx with ⟨hxI, hxE⟩
    have hxmem : x ∈ E := mem_of_mem_interiorSet (x0 := x) hxI
    have hxnot : x ∉ E := mem_compl_of_mem_exteriorSet (x0 := x) hxE
    exact (hxnot hxmem).elim
  · intro hx
    cases hx

/-- A boundary point may or may not lie in the set. -/
lemma mem_or_not_mem_of_mem_boundarySet {X : Type*} [MetricSpace X] {E : Set X} {x0 : X} :
    x0 ∈ boundarySet E → (x0 ∈ E ∨ x0 ∉ E) :=
by
  intro _
  classical
  exact Classical.em (x0 ∈ E)

/-- Helper for Proposition 1.12: `1 < 2` in `ℝ`. -/
lemma helperForProposition_1_12_one_lt_two : (1 : ℝ) < 2 :=
by
  norm_num
