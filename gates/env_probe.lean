import Lean

/-!
autoformalize's environment probe (see `gates/env.py`, which writes this file and reads what it prints).

It loads the modules asked about with `importModules`, so none of their notation, macros or elaborators is in
scope while this file is read, and prints, as framed JSON lines, every constant each module adds: its kind, its
terms as a table of nodes, the names its type and value use, its axioms, the line of its command.
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
  busy : Std.HashSet Name := {}

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

def uses (e : Expr) : M (Array Json) :=
  e.getUsedConstants.mapM fun c => do return toJson (← nameId c)

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

/-- The axioms `c` depends on, walked as `collectAxioms` walks, on its own (no memory between constants). -/
def exact (env : Environment) (c : Name) : Array Name := Id.run do
  let mut seen : Std.HashSet Name := {}
  let mut todo : Array Name := #[c]
  let mut out : Array Name := #[]
  while !todo.isEmpty do
    let d := todo.back!
    todo := todo.pop
    if seen.contains d then continue
    seen := seen.insert d
    match env.find? d with
    | some ci@(.axiomInfo _) =>
      out := out.push d
      todo := todo ++ deps ci
    | some ci => todo := todo ++ deps ci
    | none => pure ()
  return out

/-- The axioms `c` depends on, remembered between constants, walked with a stack of its own (chains of
definitions run deep). A constant met again while it is still being walked (only unsafe code refers to itself)
leaves the walks above it short, so each of those is walked again on its own (`exact`). -/
def axiomsOf (c : Name) : M (Array Name) := do
  let env ← read
  let mut stack : Array (Name × Bool) := #[(c, false)]
  while !stack.isEmpty do
    let (n, ready) := stack.back!
    stack := stack.pop
    if (← get).axioms.contains n then continue
    let info := env.find? n
    let ds := (info.map deps).getD #[]
    if ready then
      let mut found : Std.HashSet Name := {}
      if let some (.axiomInfo _) := info then found := found.insert n
      let mut cut := false
      for d in ds do
        match (← get).axioms[d]? with
        | some a => for x in a do found := found.insert x
        | none => cut := true
      let out := if cut then exact env n else found.fold (fun acc a => acc.push a) #[]
      modify fun s => { s with busy := s.busy.erase n, axioms := s.axioms.insert n out }
    else if !(← get).busy.contains n then
      modify fun s => { s with busy := s.busy.insert n }
      stack := stack.push (n, true)
      for d in ds do
        unless (← get).axioms.contains d || (← get).busy.contains d do
          stack := stack.push (d, false)
  return (← get).axioms[c]?.getD #[]

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
  let ax ← names (← axiomsOf ci.name)
  let line : Json := match declRangeExt.find? env ci.name with
    | some r => toJson r.range.pos.line
    | none => Json.null
  let mut fields : List (String × Json) := [
    ("m", toJson mid), ("n", toJson n), ("k", Json.str (kindOf ci)),
    ("u", Json.arr (ci.levelParams.toArray.map fun p => Json.str p.toString)), ("t", toJson t), ("v", v),
    ("tu", Json.arr tu), ("vu", Json.arr vu), ("ax", ax), ("r", line), ("unsafe", toJson ci.isUnsafe)]
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

def main : IO Unit := do
  let mods ← IO.ofExcept modules
  let env ← importModules (mods.map fun m => ({ module := m } : Import)) {}
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
    emit (Json.arr #[Json.str "E", toJson (← get).seq])
    flush
  (go.run env).run' {}

end AutoformalizeEnvProbe

set_option maxHeartbeats 0 in
#eval AutoformalizeEnvProbe.main
