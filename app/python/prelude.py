# tinyscope prelude: runs once in the embedded interpreter, before the user's script.
# It adds the pure-Python parts of tinygrad's API on top of the C++ `tinyscope` module (the python Ops enum,
# the dtypes namespace, Tensor methods composed from the engine's ops, __getitem__) and installs `tinygrad.*`
# aliases in sys.modules so tinygrad programs run unchanged. Embedded into the executable at build time.
import sys, os, types, enum, json, math, functools, operator, contextlib
import tinyscope as _ts
from tinyscope import Tensor, DType, UOp, Variable, EngineError

sys.executable = "/usr/bin/python3"
# line buffered like the engine's C stdio, so DEBUG lines and print() output interleave in order in a pipe
for _stream in (sys.stdout, sys.stderr):
  with contextlib.suppress(Exception): _stream.reconfigure(line_buffering=True)

# ---- Ops: one python enum, members in the engine's order, value = index (so `u.op is Ops.ADD` holds) ----
Ops = enum.Enum("Ops", [(n, i) for i, n in enumerate(_ts._op_names())], module="tinygrad.uop.ops")
Ops.__lt__ = lambda a, b: a.value < b.value if isinstance(b, Ops) else NotImplemented
Ops.__repr__ = lambda self: f"Ops.{self.name}"  # as tinygrad's FastEnum prints
_ts._set_ops_enum(Ops)
_ts.Ops = Ops

class GroupOp:
  Unary = {Ops.EXP2, Ops.LOG2, Ops.SIN, Ops.SQRT, Ops.RECIPROCAL, Ops.NEG, Ops.TRUNC}
  Binary = {Ops.ADD, Ops.MUL, Ops.CDIV, Ops.MAX, Ops.CMOD, Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ, Ops.XOR, Ops.SHL, Ops.SHR,
            Ops.OR, Ops.AND, Ops.THREEFRY, Ops.SUB, Ops.FDIV, Ops.POW, Ops.FLOORDIV, Ops.FLOORMOD}
  Ternary = {Ops.WHERE, Ops.MULACC}
  ALU = Unary | Binary | Ternary
  Elementwise = ALU | {Ops.CAST, Ops.BITCAST}
  Movement = {Ops.RESHAPE, Ops.EXPAND, Ops.PERMUTE, Ops.PAD, Ops.SHRINK, Ops.FLIP}
  Commutative = {Ops.ADD, Ops.MUL, Ops.MAX, Ops.CMPNE, Ops.CMPEQ, Ops.XOR, Ops.AND, Ops.OR}
  Associative = {Ops.ADD, Ops.MUL, Ops.AND, Ops.OR, Ops.MAX}
  Reduce = {Ops.ADD, Ops.MUL, Ops.MAX}
  Comparison = {Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ}
  All = set(Ops)

# ---- dtypes: a namespace of the engine's unique DType objects ----
class dtypes:
  @staticmethod
  def is_float(x: DType) -> bool: return x.is_float()
  @staticmethod
  def is_int(x: DType) -> bool: return x.is_int()
  @staticmethod
  def is_unsigned(x: DType) -> bool: return x.is_unsigned()
  @staticmethod
  def is_bool(x: DType) -> bool: return x.is_bool()
  @staticmethod
  def from_py(x) -> DType:
    if isinstance(x, bool): return dtypes.bool
    if isinstance(x, float): return dtypes.weakfloat
    if isinstance(x, int): return dtypes.weakint
    if isinstance(x, (list, tuple)):
      return _ts._strong_dtype(max(dtypes.from_py(xi) for xi in x)) if x else dtypes.default_float
    raise RuntimeError(f"Could not infer dtype of {x} with type {type(x)}")
  @staticmethod
  def as_const(val, dtype: DType):
    if isinstance(val, (list, tuple)): return type(val)(dtypes.as_const(v, dtype) for v in val)
    return float(val) if dtype.is_float() else bool(val) if dtype.is_bool() else int(val)
  @staticmethod
  def min(dtype: DType):
    if dtype.is_bool(): return False
    if dtype.is_int(): return 0 if dtype.is_unsigned() else -2**(dtype.itemsize*8-1)
    return -math.inf
  @staticmethod
  def max(dtype: DType):
    if dtype.is_bool(): return True
    if dtype.is_int(): return 2**(dtype.itemsize*8)-1 if dtype.is_unsigned() else 2**(dtype.itemsize*8-1)-1
    return math.inf

for _name, _dt in _ts._dtype_table(): setattr(dtypes, _name, _dt)
dtypes.weaks = (dtypes.weakint, dtypes.weakfloat)
dtypes.uints = (dtypes.uint8, dtypes.uint16, dtypes.uint32, dtypes.uint64)
dtypes.sints = (dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64)
dtypes.ints = dtypes.uints + dtypes.sints
dtypes.floats = (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64)
dtypes.fp8s = ()
dtypes.all = (dtypes.bool,) + dtypes.ints + dtypes.floats
_ts.dtypes = dtypes

def to_dtype(x) -> DType: return x if isinstance(x, DType) else getattr(dtypes, x)
def least_upper_dtype(*ds: DType) -> DType: return functools.reduce(_ts._least_upper_dtype, ds)
def strong_dtype(d: DType) -> DType: return _ts._strong_dtype(d)
def sum_acc_dtype(d: DType) -> DType: return _ts._sum_acc_dtype(d)

# ---- helpers (tinygrad.helpers, the parts programs use) ----
def prod(x): return functools.reduce(operator.mul, x, 1)
def argfix(*x):
  if x and x[0].__class__ in (tuple, list):
    if len(x) != 1: raise ValueError(f"bad arg {x}")
    return tuple(x[0])
  return x
def all_int(t): return all(isinstance(s, int) for s in t)
def flatten(l): return [item for sublist in l for item in sublist]
def dedup(x): return list(dict.fromkeys(x))
def ceildiv(num, amt): return -(num // -amt)
def round_up(num, amt): return (num + amt - 1) // amt * amt
def make_tuple(x, cnt): return (x,) * cnt if isinstance(x, int) else tuple(x)
def colored(st, color=None, background=False):
  if color is None: return st
  colors = ['black', 'red', 'green', 'yellow', 'blue', 'magenta', 'cyan', 'white']
  return f"\u001b[{10*background+60*(color.upper() == color)+30+colors.index(color.lower())}m{st}\u001b[0m"
def ansistrip(s):
  import re
  return re.sub('\x1b\\[(K|.*?m)', '', s)
def ansilen(s): return len(ansistrip(s))

@functools.cache
def getenv(key, default=0): return type(default)(os.getenv(key, default))

class ContextVar:
  _cache = {}
  def __init__(self, key, default_value):
    if key in ContextVar._cache: raise RuntimeError(f"attempt to recreate ContextVar {key}")
    ContextVar._cache[key] = self
    self.key, self.value = key, getenv(key, default_value)
  def __bool__(self): return bool(self.value)
  def __int__(self): return int(self.value)
  def __index__(self): return int(self.value)
  def __eq__(self, x): return self.value == x
  def __hash__(self): return hash(self.key)
  def __ge__(self, x): return self.value >= x
  def __gt__(self, x): return self.value > x
  def __lt__(self, x): return self.value < x
  def __le__(self, x): return self.value <= x
  def __repr__(self): return f"ContextVar({self.key!r}, {self.value!r})"

class Context(contextlib.ContextDecorator):
  # NOTE: changes the python-side values only; the engine reads DEBUG/DEV once at start-up
  def __init__(self, **kwargs): self.kwargs = kwargs
  def __enter__(self):
    self.old = {k: ContextVar._cache[k].value for k in self.kwargs}
    for k, v in self.kwargs.items(): ContextVar._cache[k].value = v
  def __exit__(self, *args):
    for k, v in self.old.items(): ContextVar._cache[k].value = v

DEBUG, VIZ = ContextVar("DEBUG", 0), ContextVar("VIZ", 0)

class _GlobalCountersMeta(type):
  @property
  def kernel_count(cls): return len(_ts.call_log()) - cls._base
class GlobalCounters(metaclass=_GlobalCountersMeta):
  _base = 0
  @staticmethod
  def reset(): GlobalCounters._base = len(_ts.call_log())

class Device:
  DEFAULT = _ts.default_device()
  @staticmethod
  def canonicalize(device):
    if device is None: return Device.DEFAULT
    head, sep, tail = device.partition(":")
    d = head.upper() + sep + tail
    return d[:-2] if d.endswith(":0") else d

# ---- Tensor: the parts of tinygrad's API composed in Python from the engine's ops ----
# These are tinygrad's mixin methods (argument normalization, indexing) written over the bound C++ methods.
def _install(fn, name=None):
  setattr(Tensor, name or fn.__name__, fn)
  return fn

Tensor.requires_grad = None
Tensor.grad = None
Tensor.training = False
Tensor.T = property(lambda self: self.transpose())

@_install
def pad(self, padding, mode="constant", value=0.0):
  if mode != "constant": raise NotImplementedError(f"pad: {mode=} is not supported by tinyscope yet")
  if not any(isinstance(p, (tuple, list, type(None))) for p in padding):
    if len(padding) % 2 != 0: raise ValueError("Flat padding must have even number of pads")
    pX = ((0, 0),) * (self.ndim - len(padding) // 2) + tuple(zip(padding[-2::-2], padding[::-2]))
  else: pX = tuple((0, 0) if p is None else tuple(p) for p in padding)
  if len(pX) != self.ndim: raise ValueError(f"padding length is improper, {padding=} {self.ndim=}")
  return self._pad([(int(a), int(b)) for a, b in pX], float(value))

@_install
def shrink(self, arg):
  if self.ndim != len(arg): raise ValueError(f"{self.ndim=} != {len(arg)=}")
  bounds = [(0, s) if x is None else (int(x[0]), x[1] if isinstance(x[1], UOp) else int(x[1])) for x, s in zip(arg, self.shape)]
  return self if all(b == (0, s) for b, s in zip(bounds, self.shape)) else self._shrink(bounds)

@_install
def pad_to(self, shape, *args):
  new = argfix(shape, *args)
  if len(new) != self.ndim: raise ValueError(f"dim mismatch, cannot pad {self.shape} to {new}")
  return self.pad(tuple(None if ns is None else (0, ns - s) for s, ns in zip(self.shape, new)))

@_install
def shrink_to(self, shape, *args):
  new = argfix(shape, *args)
  if len(new) != self.ndim: raise ValueError(f"dim mismatch, cannot shrink {self.shape} to {new}")
  return self.shrink(tuple(None if ns is None else (0, ns) for ns in new))

@_install
def size(self, dim=None): return self.shape if dim is None else self.shape[dim]

for _name, _dt in (("float", "float32"), ("half", "float16"), ("double", "float64"), ("int", "int32"), ("long", "int64"),
                   ("short", "int16"), ("char", "int8"), ("bool", "bool"), ("bfloat16", "bfloat16")):
  _install(lambda self, _dt=_dt: self.cast(getattr(dtypes, _dt)), _name)

@_install
def full_like(self, fill_value, dtype=None, device=None):
  return Tensor.full(self.shape, fill_value, dtype=dtype or self.dtype, device=self.device if device is None else device)
@_install
def zeros_like(self, **kwargs): return self.full_like(0, **kwargs)
@_install
def ones_like(self, **kwargs): return self.full_like(1, **kwargs)
@_install
def empty_like(self, dtype=None, device=None):
  return Tensor.empty(*self.shape, dtype=dtype or self.dtype, device=self.device if device is None else device)

@_install
def unflatten(self, dim, sizes):
  dim = dim + self.ndim if dim < 0 else dim
  return self.reshape(self.shape[:dim] + tuple(sizes) + self.shape[dim + 1:])

@_install
def repeat(self, repeats, *args):
  repeats = argfix(repeats, *args)
  base = self.reshape((1,) * (len(repeats) - self.ndim) + self.shape)
  new_shape = [x for b in base.shape for x in (1, b)]
  expand_shape = [x for rs in zip(repeats, base.shape) for x in rs]
  return base.reshape(new_shape).expand(expand_shape).reshape(tuple(r * s for r, s in zip(repeats, base.shape)))

@_install
def split(self, sizes, dim=0):
  dim = dim + self.ndim if dim < 0 else dim
  if isinstance(sizes, int): sizes = [min(sizes, self.shape[dim] - i) for i in range(0, max(1, self.shape[dim]), max(1, sizes))]
  if sum(sizes) != self.shape[dim]: raise ValueError(f"expect sizes to sum exactly to {self.shape[dim]}, but got {sum(sizes)}")
  out, start = [], 0
  for s in sizes:
    out.append(self.shrink(tuple((start, start + s) if i == dim else None for i in range(self.ndim))))
    start += s
  return tuple(out)

@_install
def chunk(self, chunks, dim=0):
  dim = dim + self.ndim if dim < 0 else dim
  return self.split(ceildiv(self.shape[dim], chunks) if self.shape[dim] else [0] * chunks, dim=dim)

@_install
def lshift(self, x): return self * (2 ** x)
@_install
def rshift(self, x): return self // (2 ** x)
Tensor.__lshift__ = lambda self, x: self.lshift(x)
Tensor.__rshift__ = lambda self, x: self.rshift(x)
Tensor.__ilshift__ = lambda self, x: self.assign(self.lshift(x))
Tensor.__irshift__ = lambda self, x: self.assign(self.rshift(x))

@_install
def relu6(self): return self.relu() - (self - 6).relu()
@_install
def hardtanh(self, min_val=-1, max_val=1): return self.clip(min_val, max_val)
@_install
def hardsigmoid(self, alpha=1/6, beta=0.5): return (alpha * self + beta).relu() - (alpha * self + beta - 1).relu()
@_install
def hardswish(self): return self * (self + 3).relu6() * (1/6)
@_install
def elu(self, alpha=1.0): return self.relu() - alpha * (1 - self.exp()).relu()
@_install
def celu(self, alpha=1.0): return self.maximum(0) + (alpha * ((self / alpha).exp() - 1)).minimum(0)
@_install
def softplus(self, beta=1.0): return (1 / beta) * (1 + (self * beta).exp()).log()
@_install
def mish(self): return self * self.softplus().tanh()
@_install
def quick_gelu(self): return self * (self * 1.702).sigmoid()
@_install
def log10(self): return self.log2() * (math.log(2) / math.log(10))
@_install
def isnan(self): return self != self
@_install
def isinf(self, detect_positive=True, detect_negative=True):
  return (self == math.inf) * detect_positive + (self == -math.inf) * detect_negative
@_install
def lerp(self, end, weight): return self + (end - self) * weight
@_install
def one_hot(self, num_classes=-1):
  if num_classes == -1: num_classes = int(self.max().item()) + 1
  return (self[..., None] == Tensor.arange(num_classes)).where(1, 0)

def _not_implemented(what):
  def fn(*args, **kwargs): raise NotImplementedError(f"{what} is not supported by tinyscope yet")
  return fn
for _name in ("rand", "randn", "randint", "uniform", "normal", "manual_seed", "kaiming_uniform", "glorot_uniform"):
  setattr(Tensor, _name, staticmethod(_not_implemented(f"Tensor.{_name}")))
Tensor.backward = _not_implemented("Tensor.backward")

@_install
def __iter__(self):
  if self.ndim == 0: raise TypeError("iteration over a 0-d tensor")
  return (self[i] for i in range(self.shape[0]))

@_install
def data(self):
  # tinygrad returns a memoryview; the values come from tolist() here
  import struct
  vals = self.tolist()
  flat = [vals] if self.ndim == 0 else _fully_flatten(vals)
  fmt = self.dtype.fmt if self.dtype not in dtypes.weaks else strong_dtype(self.dtype).fmt
  if fmt is None or fmt == "e": fmt = "f"
  mv = memoryview(struct.pack(f"{len(flat)}{fmt}", *flat)).cast(fmt)
  return mv if self.ndim <= 1 or 0 in self.shape else mv.cast("B").cast(fmt, self.shape)

def _fully_flatten(l): return [x for li in l for x in _fully_flatten(li)] if isinstance(l, list) else [l]

# ---- indexing (tinygrad's _getitem: shrink/flip/stride views, int collapse, None injection, tensor indices) ----
def _parse_view_index(index, size):
  if index is None: return {"size": 1, "boundary": (0, 1), "stride": 1, "collapse_dim": False}
  if isinstance(index, int):
    if index >= size or index < -size: raise IndexError(f"{index=} is out of bounds with {size=}")
    b = index if index >= 0 else index + size
    return {"size": size, "boundary": (b, b + 1), "stride": 1, "collapse_dim": True}
  if isinstance(index, slice):
    if index.step == 0: raise ValueError(f"{index=} cannot have 0 as step")
    if not all(s is None or isinstance(s, int) for s in (index.start, index.stop, index.step)):
      raise TypeError(f"slice {index=} is not supported")
    start, stop, stride = index.indices(size)
    bound = [start, stop]
    bound = [0, 0] if stride * (bound[1] - bound[0]) < 0 else ([bound[1] + 1, bound[0] + 1] if stride < 0 else bound)
    return {"size": ceildiv(bound[1] - bound[0], abs(stride)), "boundary": tuple(bound), "stride": stride, "collapse_dim": False}
  raise IndexError(f"{type(index).__name__} indexing is not supported")

def _apply_view_ops(x, mops):
  x = x.shrink(tuple(m["boundary"] for m in mops))
  if flips := tuple(i for i, m in enumerate(mops) if m["stride"] < 0): x = x.flip(flips)
  strides = tuple(abs(m["stride"]) for m in mops)
  if any(st != 1 for st in strides):
    x = x.pad_to(tuple(round_up(s, st) for s, st in zip(x.shape, strides)))
    x = x.reshape(tuple(flatten((s // st, st) for s, st in zip(x.shape, strides))))
    x = x.shrink_to(tuple(flatten((s, 1) for s in x.shape[::2]))).reshape(x.shape[::2])
  return x

def _broadcast_shape(*shapes):
  nd = max(len(s) for s in shapes)
  padded = [(1,) * (nd - len(s)) + tuple(s) for s in shapes]
  out = []
  for dims in zip(*padded):
    big = max(dims)
    if any(d != 1 and d != big for d in dims): raise IndexError(f"cannot broadcast indices of shapes {shapes}")
    out.append(0 if 0 in dims else big)
  return tuple(out)

def _parse_indices(self, indices):
  if (isinstance(indices, list) and all_int(indices)) or not isinstance(indices, (tuple, list)): indices = [indices]
  indices = list(indices)
  if len(ell := [i for i, x in enumerate(indices) if x is Ellipsis]) > 1: raise IndexError("indices can only have a single ellipsis")
  num_real = len(indices) - len(ell) - sum(1 for i in indices if i is None)
  if num_real > self.ndim: raise IndexError(f"too many indices ({num_real}) for {self.ndim}D")
  fill = ell[0] if ell else len(indices)
  indices[fill:fill + 1] = [slice(None)] * (self.ndim - num_real)

  parsed, dim = [], 0
  for index in indices:
    size = 1 if index is None else self.shape[dim]
    if isinstance(index, (list, tuple)):
      flat = _fully_flatten(list(index))
      if not all_int(flat): raise IndexError(f"{index=} contains non-int element")
      index = Tensor(index, device=self.device, dtype=dtypes.int32)
    if isinstance(index, Tensor):
      if not dtypes.is_int(index.dtype): raise IndexError(f"index dtype {index.dtype} is not supported")
      p = {"size": size, "boundary": (0, size), "stride": 1, "collapse_dim": False, "index": (index < 0).where(index + size, index)}
    else: p = {**_parse_view_index(index, size), "index": index}
    parsed.append(p)
    if index is not None: dim += 1
  return parsed

@_install
def __getitem__(self, indices):
  parsed = _parse_indices(self, indices)
  mops = [p for p in parsed if p["index"] is not None]
  x = _apply_view_ops(self, mops)
  x_dims = [p for p in parsed if not p["collapse_dim"]]
  x = x.reshape(tuple(p["size"] for p in x_dims))

  tops = [(d, p["index"]) for d, p in enumerate(x_dims) if isinstance(p["index"], Tensor)]
  if not tops: return x
  if len(tops) == 1: return x._index_tensor(tops[0][0], tops[0][1])
  # several tensor indices: one-hot masks broadcast together, multiplied, summed over the indexed dims
  dims, tensors = [d for d, _ in tops], [t for _, t in tops]
  big_shape = _broadcast_shape(*(t.shape for t in tensors))
  pre_reduce_shape = x.shape[:dims[0]] + big_shape + x.shape[dims[0]:]
  mask = None
  for d, t in zip(dims, tensors):
    i = t.reshape(t.shape + (1,) * (x.ndim - dims[0])).expand(pre_reduce_shape)
    offset = x.ndim - d - 1
    m = i == Tensor.arange(x.shape[d]).reshape((x.shape[d],) + (1,) * offset)
    mask = m if mask is None else mask * m
  reshape_arg = x.shape[:dims[0]] + (1,) * len(big_shape) + x.shape[dims[0]:]
  x = mask.where(x.reshape(reshape_arg), 0).sum(tuple(d + len(big_shape) for d in dims), dtype=x.dtype)
  if dims[0] != 0 and len(dims) != 1 and tuple(dims) != tuple(range(dims[0], dims[-1] + 1)):
    x = x.permute(*range(dims[0], dims[0] + len(big_shape)), *range(0, dims[0]), *range(dims[0] + len(big_shape), x.ndim))
  return x

@_install
def __setitem__(self, indices, v):
  # basic setitem (ints, slices, None, ...): the whole tensor becomes mask.where(v placed in the view, self), as
  # tinygrad's masked form; a realized tensor is assigned in place (the engine assigns whole buffers only)
  if self.dtype in dtypes.weaks: raise RuntimeError("cannot setitem into a weak tensor; it has no storage")
  if not isinstance(v, Tensor): v = Tensor(v, device=self.device, dtype=self.dtype)
  elif v.dtype in dtypes.weaks: v = v.cast(least_upper_dtype(self.dtype, v.dtype))
  # t[i] += x assigned into the view t[i] first (AFTER(view, STORE(view, value))): use the computed value
  if v.uop.op is Ops.AFTER and len(v.uop.src) > 1 and v.uop.src[1].op is Ops.STORE: v = Tensor(v.uop.src[1].src[1])
  if v.dtype != self.dtype: raise RuntimeError(f"setitem dtype mismatch: {self.dtype=} != {v.dtype=}")
  parsed = _parse_indices(self, indices)
  if any(isinstance(p["index"], Tensor) for p in parsed):
    raise NotImplementedError("setitem with tensor indices is not supported by tinyscope yet")
  mops = [p for p in parsed if p["index"] is not None]
  vb = v._broadcast_to(tuple(p["size"] for p in parsed if not p["collapse_dim"]))
  vb = vb.reshape(tuple(1 if p["collapse_dim"] else p["size"] for p in mops))
  per_dim = []
  for d, m in enumerate(mops):
    (s, e), st = m["boundary"], abs(m["stride"])
    if st != 1 and vb.shape[d] > 1:  # un-stride: interleave with zeros
      vb = vb.unsqueeze(d + 1)
      vb = vb.pad_to(tuple(st if j == d + 1 else None for j in range(vb.ndim)))
      vb = vb.reshape(vb.shape[:d] + (vb.shape[d] * vb.shape[d + 1],) + vb.shape[d + 2:])
      vb = vb.shrink_to(tuple(e - s if j == d else None for j in range(self.ndim)))
    idx = Tensor.arange(self.shape[d]).reshape([1] * d + [self.shape[d]] + [1] * (self.ndim - d - 1))
    per_dim.append((idx >= s) & (idx < e) & ((((e - 1 - idx) if m["stride"] < 0 else (idx - s)) % st) == 0))
  if flips := tuple(d for d, m in enumerate(mops) if m["stride"] < 0): vb = vb.flip(flips)
  vb = vb.pad(tuple((m["boundary"][0], self.shape[d] - m["boundary"][1]) for d, m in enumerate(mops)))
  mask = functools.reduce(operator.and_, per_dim) if per_dim else Tensor(True)
  new = mask.where(vb, self)
  if self.is_realized(): self.assign(new)
  else: self.replace(new)

# ---- the trace's RESULT: json text (non-finite floats as the strings "NaN", "Infinity", "-Infinity") ----
def _jsonable(x):
  if isinstance(x, float) and not math.isfinite(x): return "NaN" if math.isnan(x) else ("Infinity" if x > 0 else "-Infinity")
  if isinstance(x, dict): return {str(k): _jsonable(v) for k, v in x.items()}
  if isinstance(x, (list, tuple)): return [_jsonable(v) for v in x]
  if isinstance(x, Tensor): return _jsonable(x.tolist())
  return x

def _result_json(g):
  if "RESULT" not in g: return "null"
  return json.dumps(_jsonable(g["RESULT"]), default=str, allow_nan=False)

# ---- tinygrad import aliases ----
run_linear = _ts.run_linear

def _module(name, **attrs):
  m = types.ModuleType(name)
  m.__dict__.update(attrs)
  m.__path__ = []  # a package, so its submodules import from sys.modules
  sys.modules[name] = m
  parent, _, child = name.rpartition(".")
  if parent: setattr(sys.modules[parent], child, m)
  return m

_helpers = dict(getenv=getenv, DEBUG=DEBUG, VIZ=VIZ, Context=Context, ContextVar=ContextVar, GlobalCounters=GlobalCounters,
                prod=prod, argfix=argfix, all_int=all_int, flatten=flatten, dedup=dedup, ceildiv=ceildiv, round_up=round_up,
                make_tuple=make_tuple, colored=colored, ansistrip=ansistrip, ansilen=ansilen)
_dtype_mod = dict(DType=DType, dtypes=dtypes, to_dtype=to_dtype, least_upper_dtype=least_upper_dtype, strong_dtype=strong_dtype,
                  sum_acc_dtype=sum_acc_dtype, ConstType=(float, int, bool))
_module("tinygrad", Tensor=Tensor, dtypes=dtypes, Variable=Variable, Device=Device, GlobalCounters=GlobalCounters, Context=Context,
        UOp=UOp, Ops=Ops)
_module("tinygrad.tensor", Tensor=Tensor)
_module("tinygrad.dtype", **_dtype_mod)
_module("tinygrad.helpers", **_helpers)
_module("tinygrad.device", Device=Device)
_module("tinygrad.uop", Ops=Ops, GroupOp=GroupOp)
_module("tinygrad.uop.ops", Ops=Ops, UOp=UOp, GroupOp=GroupOp, Variable=Variable)
_module("tinygrad.engine")
_module("tinygrad.engine.realize", run_linear=run_linear)
_module("tinygrad.nn")
