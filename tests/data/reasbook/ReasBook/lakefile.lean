import Lake
open Lake DSL

package «ReasBook» where
  leanOptions := #[
    ⟨`pp.unicode.fun, true⟩,
    ⟨`relaxedAutoImplicit, false⟩,
    ⟨`weak.linter.mathlibStandardSet, true⟩,
    ⟨`maxSynthPendingDepth, (3 : Nat)⟩
  ]

require mathlib from git
  "https://github.com/leanprover-community/mathlib4.git" @ "v4.30.0"

@[default_target]
lean_lib «ReasBook» where

-- Books from ALLBOOKS (sources live under Books/<LibName>/)
lean_lib ProbabilityTheory_Klenke_2020 where
  srcDir := "Books"

lean_lib ConvexAnalysis_Rockafellar_1970 where
  srcDir := "Books"
