import Lean

/-!
autoformalize's environment probe (see `gates/env.py`, which writes this file and reads what it prints).

It loads the modules asked about with `importModules`, so none of their notation, macros or elaborators is in
scope while this file is read, and prints, as framed JSON lines, every constant each module adds: its kind, its
terms as a table of nodes, the names its type and value use, its axioms, how many holes (`sorryAx`) its value
holds, the line of its command; then every module of the environment with the file it was loaded from.
-/

namespace AutoformalizeEnvProbe
open Lean

def nonce : String := @NONCE@
def wanted : String := @MODULES@

structure State where
  seq : Nat := 0
  buffer : Array String := #[]
  mods : Std.HashMap Name Nat := {}
  names : Std.HashMap Name Nat := {}
  nodes : Std.HashMap Expr Nat := {}
  axioms : Std.HashMap Name (Array Name) := {}

abbrev M := ReaderT Environment (StateRefT State IO)

def flush : M Unit := do
  let s ← get
  unless s.buffer.isEmpty do
    IO.println ("\n".intercalate s.buffer.toList)
    set { s with buffer := #[] }

def emit (j : Json) : M Unit := do
  let s ← get
  set { s with seq := s.seq + 1, buffer := s.buffer.push (nonce ++ " " ++ toString s.seq ++ " " ++ j.compress) }
  if s.buffer.size + 1 ≥ 2000 then flush

partial def parts : Name → Array Json
  | .anonymous => #[]
  | .str p s => (parts p).push (Json.str s)
  | .num p n => (parts p).push (toJson n)

def modId (m : Name) : M Nat := do
  if let some i := (← get).mods[m]? then return i
  let i := (← get).mods.size
  modify fun s => { s with mods := s.mods.insert m i }
  emit (Json.arr #[Json.str "M", toJson i, Json.arr (parts m)])
  return i

/-- The module declaring `n`, if an imported one does. -/
def homeOf (n : Name) : M (Option Name) := do
  let env ← read
  match env.getModuleIdxFor? n with
  | some idx =>
    let i : Nat := idx  -- `ModuleIdx` is `Nat` under a definition
    return env.header.moduleNames[i]?
  | none => return none

def nameId (n : Name) : M Nat := do
  if let some i := (← get).names[n]? then return i
  let found ← homeOf n
  let mut home : Int := -1
  if let some m := found then
    home := Int.ofNat (← modId m)
  let i := (← get).names.size
  modify fun s => { s with names := s.names.insert n i }
  emit (Json.arr #[Json.str "N", toJson i, Json.arr (parts n), toJson home])
  return i

partial def level : Level → Json
  | .zero => Json.arr #[Json.str "z"]
  | .succ l => Json.arr #[Json.str "s", level l]
  | .max a b => Json.arr #[Json.str "m", level a, level b]
  | .imax a b => Json.arr #[Json.str "i", level a, level b]
  | .param n => Json.arr #[Json.str "p", Json.str n.toString]
  | .mvar _ => Json.arr #[Json.str "?"]

/-- `e` without the metadata around it, which the kernel ignores. -/
partial def bare : Expr → Expr
  | .mdata _ b => bare b
  | e => e

/-- The children of a node, in the order they are printed. -/
def kids : Expr → Array Expr
  | .app f a => #[f, a]
  | .lam _ t b _ => #[t, b]
  | .forallE _ t b _ => #[t, b]
  | .letE _ t v b _ => #[t, v, b]
  | .proj _ _ b => #[b]
  | _ => #[]

/-- A node's fields, its children by the ids they were printed under; binder names and annotations left out. -/
def fields (e : Expr) : M (Array Json) := do
  let s ← get
  -- A child is printed before its parent; were one not, -1 makes the reader refuse the listing.
  let id (c : Expr) : Json := match s.nodes[bare c]? with
    | some i => toJson i
    | none => toJson (-1 : Int)
  match e with
  | .bvar i => return #[Json.str "b", toJson i]
  | .fvar f => return #[Json.str "f", Json.arr (parts f.name)]
  | .mvar m => return #[Json.str "m", Json.arr (parts m.name)]
  | .sort u => return #[Json.str "s", level u]
  | .const c us => return #[Json.str "c", toJson (← nameId c), Json.arr (us.toArray.map level)]
  | .app f a => return #[Json.str "a", id f, id a]
  | .lam _ t b _ => return #[Json.str "l", id t, id b]
  | .forallE _ t b _ => return #[Json.str "p", id t, id b]
  | .letE _ t v b _ => return #[Json.str "z", id t, id v, id b]
  | .lit (.natVal n) => return #[Json.str "n", Json.str (toString n)]
  | .lit (.strVal v) => return #[Json.str "t", Json.str v]
  | .proj n i b => return #[Json.str "j", toJson (← nameId n), toJson i, id b]
  | .mdata _ b => return #[Json.str "?", id b]

/-- The id of `e`'s node, every node under it printed first. The walk keeps its own stack: a term may be deeper
(a long list literal) than the interpreter's stack allows recursion. -/
def node (root : Expr) : M Nat := do
  let mut stack : Array (Expr × Bool) := #[(bare root, false)]
  while !stack.isEmpty do
    let (e, ready) := stack.back!
    stack := stack.pop
    if (← get).nodes.contains e then continue
    if ready then
      let fs ← fields e
      let i := (← get).nodes.size
      modify fun s => { s with nodes := s.nodes.insert e i }
      emit (Json.arr (#[Json.str "X", toJson i] ++ fs))
    else
      stack := stack.push (e, true)
      for k in (kids e).reverse do
        let k := bare k
        unless (← get).nodes.contains k do
          stack := stack.push (k, false)
  return (← get).nodes[bare root]?.getD 0

/-- The structures `e`'s primitive projections project out of, which `getUsedConstants` leaves out: a term may
reach a project structure only so. Each subterm is visited once. -/
def projected (e : Expr) : Array Name := Id.run do
  let mut seen : Std.HashSet Expr := {}
  let mut todo : Array Expr := #[e]
  let mut out : Array Name := #[]
  while !todo.isEmpty do
    let x := todo.back!
    todo := todo.pop
    if seen.contains x then continue
    seen := seen.insert x
    match x with
    | .proj s _ b =>
      unless out.contains s do out := out.push s
      todo := todo.push b
    | .mdata _ b => todo := todo.push b
    | _ => todo := todo ++ kids x
  return out

def uses (e : Expr) : M (Array Json) :=
  (e.getUsedConstants ++ projected e).mapM fun c => do return toJson (← nameId c)

/-- How many holes `e` holds: its distinct applications of `sorryAx`, each walked once. Lean makes every `sorry`,
every goal `stop` leaves and every elaboration error a term of its own (a labelled one), so each counts once
however often the term that holds it is repeated (a sorried witness is repeated in the types of what uses it). -/
def sorries (e : Expr) : Nat := Id.run do
  let mut seen : Std.HashSet Expr := {}
  let mut todo : Array Expr := #[e]
  let mut n := 0
  while !todo.isEmpty do
    let x := todo.back!
    todo := todo.pop
    if seen.contains x then continue
    seen := seen.insert x
    if x.isAppOf ``sorryAx then
      n := n + 1
      todo := todo ++ x.getAppArgs  -- not the function: `sorryAx α b` under `sorryAx α b l` is the same hole
    else
      match x with
      | .mdata _ b => todo := todo.push b
      | .proj _ _ b => todo := todo.push b
      | _ => todo := todo ++ kids x
  return n

/-- What `Lean.collectAxioms` visits from a constant (an axiom's type too, as it does since v4.23). -/
def deps : ConstantInfo → Array Name
  | .axiomInfo v => v.type.getUsedConstants
  | .defnInfo v => v.type.getUsedConstants ++ v.value.getUsedConstants
  | .thmInfo v => v.type.getUsedConstants ++ v.value.getUsedConstants
  | .opaqueInfo v => v.type.getUsedConstants ++ v.value.getUsedConstants
  | .quotInfo _ => #[]
  | .ctorInfo v => v.type.getUsedConstants
  | .recInfo v => v.type.getUsedConstants
  | .inductInfo v => v.type.getUsedConstants ++ v.ctors.toArray

/-- The axioms `c` depends on, as `collectAxioms` finds them, every answer kept for the constants asked next.
Constants that reach each other (an inductive and its constructors, whose types name it; mutual definitions) have
one answer: the walk finds them as one strongly connected component (Tarjan's algorithm, with a stack of its own,
since chains of definitions run deep), and each constant is walked once, whatever the program asks. -/
def axiomsOf (c : Name) : M (Array Name) := do
  if let some a := (← get).axioms[c]? then return a
  let env ← read
  let mut frames : Array (Name × Array Name × Nat) := #[]  -- constant, what it uses, how many of those are done
  let mut index : Std.HashMap Name Nat := {}
  let mut low : Std.HashMap Name Nat := {}
  let mut stack : Array Name := #[]  -- visited, its component not yet closed
  let mut used : Std.HashMap Name (Array Name) := {}  -- what each constant on `stack` uses, walked once
  let mut next : Option Name := some c
  repeat
    if let some n := next then
      next := none
      index := index.insert n index.size
      low := low.insert n (index.size - 1)
      stack := stack.push n
      let ds := ((env.find? n).map deps).getD #[]
      used := used.insert n ds
      frames := frames.push (n, ds, 0)
    if frames.isEmpty then break
    let (n, ds, i) := frames.back!
    if h : i < ds.size then
      frames := frames.pop.push (n, ds, i + 1)
      let d := ds[i]
      if (← get).axioms.contains d then continue  -- its component is closed: read when `n`'s closes
      match index[d]? with
      | none => next := some d
      | some j => low := low.insert n (min (low.getD n 0) j)  -- on the stack: in `n`'s component
    else
      frames := frames.pop
      let l := low.getD n 0
      if let some (p, _, _) := frames.back? then
        low := low.insert p (min (low.getD p 0) l)
      if l == index.getD n 0 then
        let mut members : Array Name := #[]
        repeat
          let m := stack.back!
          stack := stack.pop
          members := members.push m
          if m == n then break
        let mut found : Std.HashSet Name := {}
        for m in members do
          if let some (.axiomInfo _) := env.find? m then found := found.insert m
          for d in used.getD m #[] do
            for a in (← get).axioms.getD d #[] do found := found.insert a
          used := used.erase m
        let out := found.toArray
        modify fun s => { s with axioms := members.foldl (fun acc m => acc.insert m out) s.axioms }
  return (← get).axioms.getD c #[]

def kindOf : ConstantInfo → String
  | .axiomInfo _ => "axiom"
  | .defnInfo _ => "def"
  | .thmInfo _ => "thm"
  | .opaqueInfo _ => "opaque"
  | .quotInfo _ => "quot"
  | .inductInfo _ => "induct"
  | .ctorInfo _ => "ctor"
  | .recInfo _ => "rec"

def safety : DefinitionSafety → String
  | .«unsafe» => "unsafe"
  | .safe => "safe"
  | .«partial» => "partial"

def names (ns : Array Name) : M Json := do
  return Json.arr (← ns.mapM fun n => do return toJson (← nameId n))

def record (mid : Nat) (ci : ConstantInfo) : M Unit := do
  let env ← read
  let n ← nameId ci.name
  let t ← node ci.type
  let tu ← uses ci.type
  let mut v : Json := Json.null
  let mut vu : Array Json := #[]
  match ci with
  | .defnInfo d =>
    v := toJson (← node d.value)
    vu ← uses d.value
  | .opaqueInfo d =>
    v := toJson (← node d.value)
    vu ← uses d.value
  | .thmInfo d => vu ← uses d.value
  | _ => pure ()
  let holes : Nat := match ci with
    | .defnInfo d => sorries d.value
    | .thmInfo d => sorries d.value
    | .opaqueInfo d => sorries d.value
    | _ => 0
  let ax ← names (← axiomsOf ci.name)
  let line : Json := match declRangeExt.find? env ci.name with
    | some r => toJson r.range.pos.line
    | none => Json.null
  let mut fields : List (String × Json) := [
    ("m", toJson mid), ("n", toJson n), ("k", Json.str (kindOf ci)),
    ("u", Json.arr (ci.levelParams.toArray.map fun p => Json.str p.toString)), ("t", toJson t), ("v", v),
    ("tu", Json.arr tu), ("vu", Json.arr vu), ("ax", ax), ("r", line), ("unsafe", toJson ci.isUnsafe),
    ("h", toJson holes)]
  match ci with
  | .defnInfo d => fields := fields ++ [("s", Json.str (safety d.safety))]
  | .inductInfo d =>
    fields := fields ++ [("x", (← names d.ctors.toArray)), ("np", toJson d.numParams),
      ("ni", toJson d.numIndices), ("rc", toJson d.isRec)]
  | .ctorInfo d =>
    fields := fields ++ [("x", (← names #[d.induct])), ("ci", toJson d.cidx), ("np", toJson d.numParams),
      ("nf", toJson d.numFields)]
  | _ => pure ()
  match ci with
  | .defnInfo _ | .opaqueInfo _ =>
    let mut ib : Json := Json.null
    if let some target := Compiler.getImplementedBy? env ci.name then
      ib := toJson (← nameId target)
    fields := fields ++ [("ib", ib), ("ex", toJson (isExtern env ci.name))]
  | _ => pure ()
  emit (Json.arr #[Json.str "C", Json.mkObj fields])

/-- The module names asked about, from `wanted` (a JSON list of component lists). -/
def modules : Except String (Array Name) := do
  let all ← (← Json.parse wanted).getArr?
  all.mapM fun j => do
    let ps ← j.getArr?
    ps.foldlM (fun n p => do return Name.mkStr n (← p.getStr?)) Name.anonymous

/-- Every module of the environment with the file it was loaded from, found as `importModules` found it (the same
search path, `LEAN_PATH` as `lake env` sets it), the toolchain's folder and the folder Lean runs in (the project's):
the gates account for every module. -/
def files (env : Environment) : M Unit := do
  let bin ← IO.appDir
  emit (Json.arr #[Json.str "R", Json.str (bin.parent.getD bin).toString, Json.str (← IO.currentDir).toString])
  for m in env.header.moduleNames do
    let mid ← modId m
    let file ← findOLean m
    emit (Json.arr #[Json.str "F", toJson mid, Json.str file.toString])

def main : IO Unit := do
  let mods ← IO.ofExcept modules
  let env ← importModules (mods.map fun m => ({ module := m } : Import)) Options.empty
  let go : M Unit := do
    for m in mods do
      let mid ← modId m
      match env.getModuleIdx? m with
      | none => emit (Json.arr #[Json.str "U", toJson mid])
      | some idx =>
        let i : Nat := idx
        -- The module's own copy of each constant: a theorem two modules both realize (an equation lemma) is listed
        -- under each, not as the first module's.
        for ci in env.header.moduleData[i]!.constants do
          record mid ci
    files env
    emit (Json.arr #[Json.str "E", toJson (← get).seq])
    flush
  (go.run env).run' {}

end AutoformalizeEnvProbe

set_option maxHeartbeats 0 in
#eval AutoformalizeEnvProbe.main
