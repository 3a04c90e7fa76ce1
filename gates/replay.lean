import Lean

/-!
autoformalize's kernel replay (see `gates/replay.py`, which writes this file and reads what it prints), for a
toolchain without `leanchecker`.

It reads the `.olean` of each project module asked about, loads what those modules import from outside that set
with `importModules` (the toolchain's and the dependencies' modules, which the gates account for by file), and adds
every constant of the modules asked about to that environment again through Lean's kernel
(`Lean.Environment.replay`, which checks each one whatever option it was first added under). Nothing of the project
runs here: `importModules` loads no initializer, and the project's modules are only read as data.
-/

namespace AutoformalizeReplay
open Lean

def nonce : String := @NONCE@
def wanted : String := @MODULES@

partial def parts : Name → Array Json
  | .anonymous => #[]
  | .str p s => (parts p).push (Json.str s)
  | .num p n => (parts p).push (toJson n)

/-- The module names asked about, from `wanted` (a JSON list of component lists). -/
def modules : Except String (Array Name) := do
  let all ← (← Json.parse wanted).getArr?
  all.mapM fun j => do
    let ps ← j.getArr?
    ps.foldlM (fun n p => do return Name.mkStr n (← p.getStr?)) Name.anonymous

/-- Whether `ci` is a theorem `env` holds already, with the same statement: a lemma Lean makes on demand (an
equation lemma) is stored in every module that asked for it, and the kernel adds no name twice. -/
def held (env : Environment) (ci : ConstantInfo) : Bool :=
  match env.find? ci.name, ci with
  | some (.thmInfo c), .thmInfo t => c.type == t.type && c.levelParams == t.levelParams
  | _, _ => false

def main : IO Unit := do
  let out ← IO.mkRef (#[] : Array Json)
  let mods ← IO.ofExcept modules
  let ours := mods.foldl (·.insert ·) ({} : NameSet)
  let mut consts : Std.HashMap Name ConstantInfo := {}
  let mut imports : Array Import := #[]
  let mut trusted : NameSet := {}
  for m in mods do
    let file ← findOLean m
    let (data, _) ← readModuleData file
    out.modify (·.push (Json.arr #[Json.str "P", Json.arr (parts m), Json.str file.toString,
      toJson data.constNames.size]))
    for i in data.imports do
      unless ours.contains i.module || trusted.contains i.module do
        trusted := trusted.insert i.module
        imports := imports.push i
    for n in data.constNames, ci in data.constants do
      consts := consts.insert n ci
  for i in imports do
    out.modify (·.push (Json.arr #[Json.str "I", Json.arr (parts i.module)]))
  let env ← importModules imports Options.empty
  let fresh := consts.fold (init := ({} : Std.HashMap Name ConstantInfo)) fun acc n ci =>
    if held env ci then acc else acc.insert n ci
  try
    discard <| env.replay fresh
    out.modify (·.push (Json.arr #[Json.str "K", toJson fresh.size]))
  catch e =>
    out.modify (·.push (Json.arr #[Json.str "D", Json.str (toString e)]))
  let lines ← out.get
  let mut k := 0
  for j in lines do
    IO.println (nonce ++ " " ++ toString k ++ " " ++ j.compress)
    k := k + 1
  IO.println (nonce ++ " " ++ toString lines.size ++ " " ++ (Json.arr #[Json.str "E", toJson lines.size]).compress)

end AutoformalizeReplay

set_option maxHeartbeats 0 in
#eval AutoformalizeReplay.main
