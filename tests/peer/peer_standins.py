# Stand-ins for names of the reference's *internals* that tinygrad's test files import and that have no meaning in
# tinyscope. The peer runner installs them before any test file is imported; nothing else does (a user's script gets
# tinyscope's public tinygrad API only). Each entry says why it is a stand-in. A class stands in for a renderer or
# runtime tinyscope does not have: no object is ever an instance of it, so `isinstance(dev.renderer, NIRRenderer)`
# is False, as it is for the reference on a device without that renderer. A function stands in for a codegen
# internal: calling it raises NotImplementedError naming it, so a test that needs it fails visibly.
import sys, types

def _internal(qualname, why):
  def f(*args, **kwargs): raise NotImplementedError(f"{qualname} is an internal of the reference that tinyscope does not have ({why})")
  f.__name__ = f.__qualname__ = qualname.rsplit(".", 1)[-1]
  return f

def _absent_class(name, why):
  return type(name, (), {"__doc__": f"stand-in: {why}", "__init__": _internal(name, why)})

STANDINS = {
  # module: {name: (kind, reason)}
  "tinygrad.renderer.nir": {"NIRRenderer": ("class", "Mesa NIR renderer; tinyscope renders GLSL for Vulkan")},
  "tinygrad.renderer.ptx": {"PTXRenderer": ("class", "CUDA PTX renderer; tinyscope has no CUDA device")},
  "tinygrad.renderer.isa.x86": {"X86Renderer": ("class", "the reference's x86 assembly renderer; tinyscope's CPU renders C and LLVM IR")},
  "tinygrad.runtime.ops_python": {"PythonRenderer": ("class", "the reference's Python-emulator device; tinyscope's interpreter is INTERP")},
  "tinygrad.renderer": {"Renderer": ("class", "the reference's renderer base class (codegen internals in test/helpers.py)")},
  "tinygrad.codegen": {
    "to_program": ("func", "the reference's codegen entry point over its own UOp graphs"),
    "full_rewrite_to_sink": ("func", "the reference's codegen pass list"),
    "line_rewrite": ("func", "the reference's linearizer rewrite"),
    "pm_linearize_cleanups": ("value", "a PatternMatcher of the reference's linearizer"),
  },
  "tinygrad.uop.ops": {"graph_rewrite": ("func", "the reference's rewrite engine over its own UOp graphs; tinyscope's UOp handle is read-only")},
  "tinygrad.engine.realize": {
    "lower_and_compile": ("func", "the reference's codegen of one of its CALL UOps"),
    "pm_beam": ("value", "a PatternMatcher of the reference's BEAM step"),
  },
  "tinygrad.runtime.graph.hcq": {"HCQGraph": ("class", "the reference's graph handler of its HCQ devices (AMD, NV, QCOM); tinyscope has none")},
  "tinygrad.codegen.late": {},
  "tinygrad.codegen.late.linearizer": {"linearize": ("func", "the reference's linearizer over its UOp graphs")},
}

def _package(mod):
  """the module `mod`, created (with every missing parent) as an empty package when tinyscope has none"""
  if mod in sys.modules: return sys.modules[mod]
  parent, _, child = mod.rpartition(".")
  m = types.ModuleType(mod)
  m.__path__ = []
  sys.modules[mod] = m
  if parent: setattr(_package(parent), child, m)
  return m

def install():
  for mod, names in STANDINS.items():
    m = _package(mod)
    for name, (kind, why) in names.items():
      if hasattr(m, name): raise RuntimeError(f"stand-in {mod}.{name}: tinyscope has this name itself; remove the stand-in")
      setattr(m, name, _absent_class(name, why) if kind == "class" else _internal(f"{mod}.{name}", why) if kind == "func" else None)
