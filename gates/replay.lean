import Lean

/-!
autoformalize's kernel replay (see `gates/replay.py`, which writes this file and reads what it prints), for a
toolchain without `leanchecker`.

It reads the `.olean` of each project module asked about, loads what those modules import from outside that set
with `importModules` (the toolchain's and the dependencies' modules, which the gates account for by file), and adds
every constant of the modules asked about to that environment again through Lean's kernel
(`Lean.Environment.replay`, which checks each one whatever option it was first added under). It prints every module
of that environment with its file, as the probe does, for the gates to account for. Nothing of the project runs
here: `importModules` loads no initializer, and the project's modules are only read as data.
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

/-- Whether `a` and `b` are theorems of one statement: a lemma Lean makes on demand is stored in every module that
asked for it, and the kernel adds no name twice. -/
def same (a b : ConstantInfo) : Bool :=
  match a, b with
  | .thmInfo x, .thmInfo y => x.type == y.type && x.levelParams == y.levelParams
  | _, _ => false

def main : IO Unit := do
  let out ← IO.mkRef (#[] : Array Json)
  let say (j : Json) : IO Unit := out.modify (·.push j)
  let mods ← IO.ofExcept modules
  let ours := mods.foldl (·.insert ·) ({} : NameSet)
  let mut consts : Std.HashMap Name ConstantInfo := {}
  let mut copies : Array ConstantInfo := #[]  -- a theorem another module of the set holds too: checked apart
  let mut clash : Option Name := none
  let mut imports : Array Import := #[]
  let mut trusted : NameSet := {}
  for m in mods do
    let file ← findOLean m
    let (data, _) ← readModuleData file
    say (Json.arr #[Json.str "P", Json.arr (parts m), Json.str file.toString, toJson data.constants.size])
    -- Lean's module system keeps a module's private part in a file beside it, which this program does not read.
    for part in [".server", ".private"] do
      if ← System.FilePath.pathExists (file.toString ++ part) then
        say (Json.arr #[Json.str "S", Json.arr (parts m), Json.str part])
    for i in data.imports do
      unless ours.contains i.module || trusted.contains i.module do
        trusted := trusted.insert i.module
        imports := imports.push i
    for ci in data.constants do
      match consts[ci.name]? with
      | none => consts := consts.insert ci.name ci
      | some c => if same c ci then copies := copies.push ci else clash := clash <|> some ci.name
  let env ← importModules imports Options.empty
  let bin ← IO.appDir
  say (Json.arr #[Json.str "R", Json.str (bin.parent.getD bin).toString, Json.str (← IO.currentDir).toString])
  for m in env.header.moduleNames do
    say (Json.arr #[Json.str "F", Json.arr (parts m), Json.str (← findOLean m).toString])
  let mut fresh : Std.HashMap Name ConstantInfo := {}
  let mut held := 0
  for (n, ci) in consts.toList do
    match env.find? n with
    | some c => if same c ci then held := held + 1 else fresh := fresh.insert n ci
    | none => fresh := fresh.insert n ci
  match clash with
  | some n => say (Json.arr #[Json.str "D", Json.str s!"two modules asked about declare {n}, differently"])
  | none =>
    try
      let checked ← env.replay fresh
      -- Each other copy of a theorem two modules hold goes through the kernel under a name of its own.
      let mut k := 0
      for ci in copies do
        if let .thmInfo t := ci then
          let name := Name.str t.name s!"_autoformalizeCopy{k}"
          discard <| checked.replay (({} : Std.HashMap Name ConstantInfo).insert name
            (.thmInfo { t with name := name, all := [name] }))
        k := k + 1
      say (Json.arr #[Json.str "K", toJson fresh.size, toJson held, toJson copies.size])
    catch e =>
      say (Json.arr #[Json.str "D", Json.str (toString e)])
  let lines ← out.get
  let mut k := 0
  for j in lines do
    IO.println (nonce ++ " " ++ toString k ++ " " ++ j.compress)
    k := k + 1
  IO.println (nonce ++ " " ++ toString lines.size ++ " " ++ (Json.arr #[Json.str "E", toJson lines.size]).compress)

end AutoformalizeReplay

set_option maxHeartbeats 0 in
#eval AutoformalizeReplay.main
