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
class _DTypesMeta(type):
  # DEFAULT_FLOAT / DEFAULT_INT as the engine uses them now (a Context may set them for a block)
  @property
  def default_float(cls): return _ts._default_dtypes()[0]
  @property
  def default_int(cls): return _ts._default_dtypes()[1]
class dtypes(metaclass=_DTypesMeta):
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
dtypes.fp8_ocp = (dtypes.fp8e4m3, dtypes.fp8e5m2)
dtypes.fp8_fnuz = (dtypes.fp8e4m3fnuz, dtypes.fp8e5m2fnuz)
dtypes.fp8s = dtypes.fp8_ocp + dtypes.fp8_fnuz
dtypes.floats = dtypes.fp8s + (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64)
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
  # sets ContextVars for a block; those the engine reads (DEBUG, BEAM, NOOPT, NOLOCALS, USE_TC, ...) are set in the
  # engine too and restored after, so a kernel compiled inside `Context(NOOPT=1)` is made without opts
  def __init__(self, **kwargs): self.kwargs = kwargs
  def __enter__(self):
    self.old = {k: ContextVar._cache[k].value for k in self.kwargs}
    self.old_engine = {}
    for k, v in self.kwargs.items():
      ContextVar._cache[k].value = v
      known, before = _ts._set_engine_var(k, v)
      if known: self.old_engine[k] = before
  def __exit__(self, *args):
    for k, v in self.old.items(): ContextVar._cache[k].value = v
    for k, v in self.old_engine.items(): _ts._set_engine_var(k, v)

DEBUG, VIZ = ContextVar("DEBUG", 0), ContextVar("VIZ", 0)

class _GlobalCountersMeta(type):
  # the engine's totals since the last reset(): calls run, their estimated ops and bytes moved; mem_used is the
  # bytes device buffers hold now (reset() leaves it, as the reference's)
  @property
  def kernel_count(cls): return _ts.call_count() - cls._base
  @property
  def global_ops(cls): return int(_ts.work_totals()[0] - cls._base_work[0])
  @property
  def global_mem(cls): return int(_ts.work_totals()[1] - cls._base_work[1])
  @property
  def mem_used(cls): return _ts.allocated_bytes()
class GlobalCounters(metaclass=_GlobalCountersMeta):
  _base, _base_work = 0, (0.0, 0.0)
  @staticmethod
  def reset(): GlobalCounters._base, GlobalCounters._base_work = _ts.call_count(), _ts.work_totals()

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

Tensor.training = False
Tensor.T = property(lambda self: self.transpose())

# .grad: one Python object per gradient tensor while any holds it, so `x.grad is old_grad` after backward accumulates
# into it in place (as the reference's); a new gradient tensor is a new object
import weakref as _weakref
_grad_property, _grad_wrappers = Tensor.grad, _weakref.WeakValueDictionary()
def _grad_get(self):
  g = _grad_property.fget(self)
  return None if g is None else _grad_wrappers.setdefault(g._data_key, g)
Tensor.grad = property(_grad_get, _grad_property.fset)

@_install
def pad(self, padding, mode="constant", value=0.0):
  if not any(isinstance(p, (tuple, list, type(None))) for p in padding):
    if len(padding) % 2 != 0: raise ValueError("Flat padding must have even number of pads")
    pX = ((0, 0),) * (self.ndim - len(padding) // 2) + tuple(zip(padding[-2::-2], padding[::-2]))
  else: pX = tuple((0, 0) if p is None else tuple(p) for p in padding)
  if len(pX) != self.ndim: raise ValueError(f"padding length is improper, {padding=} {self.ndim=}")
  pX = tuple((int(a), int(b)) for a, b in pX)
  if mode == "constant": return self._pad(list(pX), float(value))
  if mode == "circular": return self._pad_circular(pX)
  if mode in ("reflect", "replicate"): return self._pad_reflect_replicate(pX, mode)
  raise NotImplementedError(f"pad: {mode=} is not supported (constant, reflect, replicate, circular)")

@_install
def _pad_circular(self, pX):
  # negative pads shrink first; then the tensor is tiled (1 + a copy per padded side) and the window cut out of it
  X = self.shrink(tuple((-min(b, 0), min(a + s, s)) for (b, a), s in zip(pX, self.shape)))
  pX = tuple((max(b, 0), max(a, 0)) for b, a in pX)
  if any(b > s or a > s for (b, a), s in zip(pX, X.shape)): raise ValueError("Padding value causes wrapping around more than once.")
  orig, X = X.shape, X.repeat(tuple(1 + bool(b) + bool(a) for b, a in pX))
  return X.shrink(tuple((0 if b == 0 else o - b, x if a == 0 else x - o + a) for (b, a), o, x in zip(pX, orig, X.shape)))

@_install
def _pad_reflect_replicate(self, pX, mode):
  # one axis at a time: the mirrored (or repeated edge) slices are concatenated on both sides; negative pads shrink last
  X = self
  for d, (b, a) in enumerate((max(b, 0), max(a, 0)) for b, a in pX):
    s = X.shape[d]
    def along(sl): return X[tuple(sl if i == d else slice(None) for i in range(X.ndim))]
    if mode == "reflect":
      if b >= s or a >= s: raise ValueError(f"Padding ({b}, {a}) should be less than the input size={s} for dim={d}.")
      before = along(slice(b, 0, -1)) if b > 0 else None
      after = along(slice(s - 2, s - 2 - a if s - 2 - a >= 0 else None, -1)) if a > 0 else None
    else:
      edge = lambda lo, p: X.shrink(tuple((lo, lo + 1) if i == d else None for i in range(X.ndim))).expand(tuple(p if i == d else None for i in range(X.ndim)))
      before = edge(0, b) if b > 0 else None
      after = edge(s - 1, a) if a > 0 else None
    parts = [t for t in (before, X, after) if t is not None]
    X = parts[0].cat(*parts[1:], dim=d)
  return X.shrink(tuple((-min(b, 0), min(a + s, s)) for (b, a), s in zip(pX, X.shape)))

@_install
def shrink(self, arg):
  if self.ndim != len(arg): raise ValueError(f"{self.ndim=} != {len(arg)=}")
  bounds = [(0, s) if x is None else tuple(b if isinstance(b, UOp) else int(b) for b in x) for x, s in zip(arg, self.shape)]
  return self if all(b == (0, s) for b, s in zip(bounds, self.shape)) else self._shrink(bounds)

@_install
def pad_to(self, shape, *args):
  new = argfix(shape, *args)
  if len(new) != self.ndim: raise ValueError(f"dim mismatch, cannot pad {self.shape} to {new}")
  if any(ns is not None and ns < s for s, ns in zip(self.shape, new)): raise ValueError(f"pad_to: cannot pad {self.shape} to the smaller {new}")
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
def _multi_like(self, fxn):
  # a multi-device tensor's like: fxn(shape, device) made once and copied to each device, or one shard per device
  if self.uop.axis is None: return fxn(self.shape, None).shard(self.device)
  shard_shape = tuple(s // len(self.device) if i == self.uop.axis else s for i, s in enumerate(self.shape))
  return Tensor._mstack([fxn(shard_shape, d) for d in self.device], self.uop.axis)
def _no_multi_like_device(self, device):
  if device is not None: raise RuntimeError("cannot specify `device` on `*_like` of a multi device tensor")
@_install
def full_like(self, fill_value, dtype=None, device=None, buffer=True):
  if isinstance(self.device, tuple):
    _no_multi_like_device(self, device)
    return self._multi_like(lambda shape, dev: Tensor.full(shape, fill_value, dtype=dtype or self.dtype, device=dev, buffer=buffer))
  return Tensor.full(self.shape, fill_value, dtype=dtype or self.dtype, device=self.device if device is None else device, buffer=buffer)
@_install
def zeros_like(self, **kwargs): return self.full_like(0, **kwargs)
@_install
def ones_like(self, **kwargs): return self.full_like(1, **kwargs)
@_install
def empty_like(self, dtype=None, device=None):
  return Tensor.empty(*self.shape, dtype=dtype or self.dtype, device=self.device if device is None else device)

@_install
def unflatten(self, dim, sizes):
  dim = self._resolve_dim(dim)
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
  if sum(sizes) != self.shape[dim]: raise AssertionError(f"expect sizes to sum exactly to {self.shape[dim]}, but got {sum(sizes)}")
  out, start = [], 0
  for s in sizes:
    out.append(self.shrink(tuple((start, start + s) if i == dim else None for i in range(self.ndim))))
    start += s
  return tuple(out)

@_install
def chunk(self, chunks, dim=0):
  if not chunks > 0: raise AssertionError(f"expect chunks to be greater than 0, got: {chunks}")
  dim = dim + self.ndim if dim < 0 else dim
  return self.split(ceildiv(self.shape[dim], chunks) if self.shape[dim] else [0] * chunks, dim=dim)


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
def softplus(self, beta=1.0): return (1 / beta) * (self * beta).logaddexp(0.0)
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
# ---- more of tinygrad's Tensor API (mixin/elementwise.py, movement.py, op.py, rand.py), composed as tinygrad does ----
def polyN(x, p): return functools.reduce(lambda acc, c: acc * x + c, p, 0.0)
def merge_dicts(ds):
  kvs = set([(k, v) for d in ds for k, v in d.items()])
  if len(kvs) != len(set(kv[0] for kv in kvs)): raise RuntimeError(f"{kvs} contains different values for the same key")
  return {k: v for d in ds for k, v in d.items()}
def _argsort_list(x): return type(x)(sorted(range(len(x)), key=x.__getitem__))
def flat_to_grouped(padding): return tuple(zip(padding[-2::-2], padding[::-2]))
def resolve_pool_pads(padding, dims):
  if not isinstance(padding, int) and not (len(padding) == 2 * dims or len(padding) == dims):
    raise ValueError(f"Padding must be an int or a sequence of length {dims} or {2*dims}, but got {padding=} with {dims=}.")
  return [padding] * 2 * dims if isinstance(padding, int) else (padding if len(padding) == 2 * dims else [p for p in padding for _ in range(2)][::-1])
def identity_element(op, dt):
  return dtypes.as_const({Ops.ADD: 0, Ops.MUL: 1, Ops.MAX: dtypes.min(dt)}[op], dt)
TRAINING = ContextVar("TRAINING", 0)
FUSE_OPTIM = ContextVar("FUSE_OPTIM", 0)

@_install
def is_floating_point(self): return dtypes.is_float(self.dtype)
@_install
def const_like(self, b, dtype=None):
  c = Tensor.scalar(b, dtype or self.dtype)
  return c._broadcast_to(*self.shape) if self.shape else c
@_install
def ufix(self, x): return x if isinstance(x, Tensor) else Tensor.scalar(x)
@_install
def usum(self, *uops): return functools.reduce(operator.or_ if self.dtype is dtypes.bool else operator.add, argfix(*uops), self)
@_install
def uprod(self, *uops): return functools.reduce(operator.and_ if self.dtype is dtypes.bool else operator.mul, argfix(*uops), self)
@_install
def _inverse(self): return -self if self.is_floating_point() else ~self
@_install
def _resolve_dim(self, dim, *, extra=False):
  total = self.ndim + int(extra)
  if not -max(1, total) <= dim <= max(1, total) - 1: raise IndexError(f"{dim=} out of range {[-max(1, total), max(1, total) - 1]}")
  return dim + total if dim < 0 else dim
@_install
def _pad_constant(self, pX, value):
  pX = tuple((0, 0) if p is None else p for p in pX)
  if any(p < 0 for p in flatten(pX)):
    X = self.shrink(tuple((-min(pB, 0), min(pA + s, s)) for (pB, pA), s in zip(pX, self.shape)))
    pX = tuple((max(pB, 0), max(pA, 0)) for pB, pA in pX)
  else: X = self
  return X.pad(pX, value=value)

# elementwise
@_install
def fmod(self, x):
  a, b = self, self.ufix(x)
  return a - a.div(b, rounding_mode="trunc") * b
@_install
def copysign(self, other):
  b = self.ufix(other)
  return ((b < 0) | (b.reciprocal() < 0)).where(-(mag := self.abs()), mag)
@_install
def logaddexp(self, other):
  a, b = self, self.ufix(other)
  m = a.maximum(b)
  return ((a - m).exp() + (b - m).exp()).log() + m
@_install
def masked_fill(self, mask, value): return mask.where(value, self)
@_install
def isfinite(self): return (self.isinf() | self.isnan()).logical_not()
@_install
def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
  other = self.ufix(other)
  is_finite_close = self.isfinite() & other.isfinite() & ((self - other).abs() <= atol + rtol * other.abs())
  is_infinite_close = (self.isinf() | other.isinf()) & self.eq(other)
  is_nan_close = (self.isnan() & other.isnan()) & equal_nan
  return is_finite_close | is_infinite_close | is_nan_close
@_install
def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
  return self.isclose(other, rtol=rtol, atol=atol, equal_nan=equal_nan).all()
@_install
def atanh(self): return ((1 + self) / (1 - self)).log() / 2
@_install
def asinh(self): return (self + (self.square() + 1).sqrt()).log()
@_install
def acosh(self): return (self + (self.square() - 1).sqrt()).log()
@_install
def asin(self):
  coefficients = [-0.0012624911, 0.0066700901, -0.0170881256, 0.0308918810, -0.0501743046, 0.0889789874, -0.2145988016, 1.5707963050]
  x = math.pi / 2 - (1.0 - self.abs()).sqrt() * polyN(self.abs(), coefficients)
  return self.sign() * x
@_install
def acos(self): return math.pi / 2 - self.asin()
@_install
def atan(self): return (self / (1 + self * self).sqrt()).asin()
@_install
def selu(self, alpha=1.67326, gamma=1.0507): return gamma * (self >= 0).where(self, alpha * (self.exp() - 1))
@_install
def logsigmoid(self): return -(-self).softplus()
@_install
def sinh(self): return (self.exp() - self.neg().exp()) / 2
@_install
def cosh(self): return (self.exp() + self.neg().exp()) / 2
@_install
def erf(self):
  t = 1.0 / (1.0 + 0.3275911 * self.abs())
  return self.sign() * (1.0 - t * polyN(t, [1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592]) * (-self.square()).exp())
@_install
def softsign(self): return self / (1 + self.abs())
@_install
def softmin(self, axis=-1, dtype=None): return (-self).softmax(axis, dtype)

# creation
@staticmethod
def _linspace(start, stop, steps, dtype=None):
  if steps < 0: raise ValueError("number of steps must be non-negative")
  if (dtype := to_dtype(dtype or dtypes.default_float)) == dtypes.bool: raise ValueError("linspace with bool dtype is not supported")
  if steps == 1: return Tensor.scalar(start, dtype).reshape(1)
  return (start + Tensor.arange(steps, dtype=dtypes.default_float) * ((stop - start) / (steps - 1))).cast(dtype)
Tensor.linspace = _linspace
@staticmethod
def _tri(r, c, diagonal=0): return Tensor.arange(r).unsqueeze(-1) + diagonal <= Tensor.arange(c)
Tensor._tri = _tri
@_install
def triu(self, diagonal=0): return self._tri(self.shape[-2], self.shape[-1], diagonal).where(self, self.const_like(0))
@_install
def tril(self, diagonal=0): return self._tri(self.shape[-2], self.shape[-1], diagonal + 1).where(self.const_like(0), self)
def _const_full(shape, value, dtype):  # full(..., buffer=False): a broadcast CONST, deviceless
  return Tensor.scalar(value, dtype).reshape((1,) * len(shape)).expand(shape)

# movement
@_install
def repeat_interleave(self, repeats, dim=None):
  x, dim = (self.flatten(), 0) if dim is None else (self, self._resolve_dim(dim))
  shp = x.shape
  x = x.reshape(*shp[:dim + 1], 1, *shp[dim + 1:])
  x = x.expand(*shp[:dim + 1], repeats, *shp[dim + 1:])
  return x.reshape(*shp[:dim], shp[dim] * repeats, *shp[dim + 1:])
@_install
def roll(self, shifts, dims=None):
  if dims is None: return self.flatten().roll(shifts, 0).reshape(self.shape)
  dims, shifts = tuple(self._resolve_dim(d) for d in make_tuple(dims, 1)), make_tuple(shifts, 1)
  if len(dims) != len(shifts): raise RuntimeError(f"{len(dims)=} != {len(shifts)=}")
  if 0 in self.shape: return self
  shrink_arg = [None] * self.ndim
  for d, s in zip(dims, shifts): shrink_arg[d] = (delta := self.shape[d] - s % self.shape[d], delta + self.shape[d])
  return self.repeat(*tuple(2 if i in dims else 1 for i in range(self.ndim))).shrink(tuple(shrink_arg))
@_install
def diag(self):
  if self.ndim != 1: raise ValueError(f"expect input to be 1-D, getting {self.ndim}-D")
  return self.unsqueeze(-1).pad_to((None, 1 + (n := self.shape[0]))).flatten().shrink_to((n * n,)).reshape(n, n)
@_install
def diagonal(self, offset=0, dim1=0, dim2=1):
  if (dim1 := self._resolve_dim(dim1)) == (dim2 := self._resolve_dim(dim2)): raise RuntimeError("dim1 and dim2 cannot be the same dimension")
  x = self.permute(*[i for i in range(self.ndim) if i != dim1 and i != dim2], dim1, dim2)
  if offset >= 0: x = x.shrink(tuple(None for _ in x.shape[:-1]) + ((offset, x.shape[-1]),))
  else: x = x.shrink(tuple(None for _ in x.shape[:-2]) + ((-offset, x.shape[-2]), None))
  if (d := min(int(x.shape[-2]), int(x.shape[-1]))) <= 0: return x.reshape(*x.shape[:-2], 0)
  nones, x = tuple(None for _ in x.shape[:-2]), x.shrink_to(tuple(None for _ in x.shape[:-2]) + (d, d))
  return x.flatten(-2).pad_to(nones + (d * (d + 1),)).unflatten(-1, (d, d + 1)).shrink_to(nones + (None, 1)).squeeze(-1)
@_install
def meshgrid(self, *args, indexing="ij"):
  if indexing not in ("ij", "xy"): raise RuntimeError(f'indexing must be in ("ij", "xy"), got {indexing}')
  if len(tensors := (self, *args)) == 1: return tensors
  basis = tuple(range(len(tensors))) if indexing == "ij" else (1, 0) + tuple(range(2, len(tensors)))
  tensors = tuple(t.reshape((-1,) + (1,) * (len(args) - i)) for i, t in zip(basis, tensors))
  output_shape = _broadcast_shape(*(t.shape for t in tensors))
  return tuple(t._broadcast_to(*output_shape) for t in tensors)
@_install
def unfold(self, dim, size, step):
  if size < 0: raise RuntimeError(f'size must be >= 0 but got {size=}')
  if step <= 0: raise RuntimeError(f'step must be > 0 but got {step=}')
  if size > self.shape[dim]: raise RuntimeError(f'maximum size for tensor at dimension {dim} is {self.shape[dim]} but size is {size}')
  dim = self._resolve_dim(dim)
  perm_to_last = tuple(i for i in range(self.ndim) if i != dim) + (dim,)
  return self.permute(perm_to_last)._pool((size,), step).permute(_argsort_list(perm_to_last) + (self.ndim,))

# reduce / processing
@_install
def var_mean(self, axis=None, keepdim=False, correction=1): return self.var(axis, keepdim, correction), self.mean(axis, keepdim)
@_install
def std_mean(self, axis=None, keepdim=False, correction=1): return self.std(axis, keepdim, correction), self.mean(axis, keepdim)
@_install
def _cumalu(self, axis, op):
  assert self.shape[axis] != 0 and op in (Ops.ADD, Ops.MAX, Ops.MUL)
  pads = (None,) * (self.ndim - 1) + ((self.shape[axis] - 1, 0),)
  pooled = self.transpose(axis, -1)._pad_constant(pads, identity_element(op, self.dtype))._pool((self.shape[axis],))
  return getattr(pooled, {Ops.ADD: "sum", Ops.MAX: "max", Ops.MUL: "prod"}[op])(-1).transpose(axis, -1)
_ts_alu = {Ops.ADD: operator.add, Ops.MUL: operator.mul, Ops.MAX: lambda a, b: a.maximum(b)}
@_install
def _split_cumalu(self, axis, op):
  axis = self._resolve_dim(axis)
  if self.ndim == 0 or 0 in self.shape: return self.cast(self.sum().dtype) if op is Ops.ADD else self
  SPLIT = 256
  value = identity_element(op, self.dtype)
  if not isinstance(s := self.shape[axis], int) or s <= SPLIT * 2: return self._cumalu(axis, op)
  chunks = self.transpose(axis, -1)._pad_constant((None,) * (self.ndim - 1) + ((round_up(s, SPLIT) - s, 0),), value).unflatten(-1, (-1, SPLIT))._cumalu(-1, op)
  base = chunks[..., -1]._cumalu(-1, op)._pad_constant((None,) * (chunks.ndim - 2) + ((1, -1),), value)
  return _ts_alu[op](chunks, base.unsqueeze(-1)).flatten(start_dim=-2)[..., -s:].transpose(axis, -1)
@_install
def cumprod(self, axis): return self._split_cumalu(axis, Ops.MUL)
@_install
def cummax(self, axis=0):
  if self.ndim == 0: return self._split_cumalu(axis, Ops.MAX), _const_full(self.shape, 0, dtypes.int32)
  values, n = self._split_cumalu(axis, Ops.MAX), int(self.shape[axis])
  x, values_t = self.transpose(axis, -1), values.transpose(axis, -1)
  match = x.unsqueeze(-1).eq(values_t.unsqueeze(-2)) * _const_full((n, n), True, dtypes.bool).triu()
  idx = (-(match * Tensor.arange(n, 0, -1).reshape(n, 1)).max(-2) + n).cast(dtypes.int32)
  return values, idx.transpose(-1, axis)
@_install
def cummin(self, axis=0):
  values, indices = self._inverse().cummax(axis)
  return values._inverse(), indices
@_install
def logcumsumexp(self, axis=0):
  if self.ndim == 0: return self
  x = self.transpose(axis, -1)
  last_dim_size = x.shape[-1]
  x_unsqueezed = x.unsqueeze(-2)
  x_cummax = x.cummax(-1)[0].detach()
  mask = _const_full((last_dim_size, last_dim_size), True, dtypes.bool).tril()
  ret = mask.where(x_unsqueezed - x_cummax.unsqueeze(-1), dtypes.min(self.dtype)).exp().sum(-1).log() + x_cummax
  return ret.transpose(-1, axis)
@_install
def _one_hot_along_dim(self, num_classes, dim=-1):
  if not dtypes.is_int(self.dtype): raise RuntimeError(f"_one_hot_along_dim expects int index tensor, getting {self.dtype}")
  offset = self.ndim - self._resolve_dim(dim) - 1
  return self.eq(Tensor.arange(num_classes).reshape((num_classes,) + (1,) * offset))
@_install
def one_hot(self, num_classes):
  if not dtypes.is_int(self.dtype): raise RuntimeError(f"expect integer dtype, getting {self.dtype=}")
  if num_classes < 0: raise ValueError(f"num_classes must be non-negative, got {num_classes}")
  return self[..., None]._one_hot_along_dim(num_classes).where(1, 0)
@_install
def sort(self, dim=-1, descending=False):
  x, dim = self, self._resolve_dim(dim)
  if (orig_len := int(x.shape[dim])) <= 1: return x, x.const_like(0, dtypes.default_int)
  n_stages = (orig_len - 1).bit_length()
  pads = tuple((0, 2**n_stages - orig_len) if i == dim else None for i in range(x.ndim))
  x = x._pad_constant(pads, dtypes.min(x.dtype) if descending else dtypes.max(x.dtype)).unflatten(dim, (2,) * n_stages)
  for stage in range(1, n_stages + 1):
    if stage != n_stages:
      crossover_dim = dim + n_stages - stage - 1
      blue_box, green_box = x.split(1, crossover_dim)
      flip_dims = tuple(-i for i in range(1, stage + 1 + (self.ndim - dim)))
      x = (blue_box.cat(green_box.flip(flip_dims), dim=crossover_dim)).contiguous()
    for substage in range(stage - 1, -1, -1):
      partner_dim = dim + n_stages - substage - 1
      x_top, x_bottom = x.split(1, partner_dim)
      x_larger, x_smaller = x_top.maximum(x_bottom), x_top.minimum(x_bottom)
      x = (x_larger.cat(x_smaller, dim=partner_dim) if descending else x_smaller.cat(x_larger, dim=partner_dim)).contiguous()
    if stage != n_stages:
      blue_box, flipped_green_box = x.split(1, crossover_dim)
      x = blue_box.cat(flipped_green_box.flip(flip_dims), dim=crossover_dim)
  x = x.flatten(dim, dim + n_stages - 1).shrink_to(self.shape)
  mask = _const_full((orig_len, orig_len), True, dtypes.bool).tril()
  mask = mask.reshape((None, None) + (1,) * (self.ndim - dim - 1))
  def compute_counts(t): return (mask & t.unsqueeze(dim).eq(t.unsqueeze(dim + 1))).sum(dim + 1)
  count_orig, count_sorted = compute_counts(self), compute_counts(x)
  cond = self.unsqueeze(dim + 1).eq(x.unsqueeze(dim)) & count_orig.unsqueeze(dim + 1).eq(count_sorted.unsqueeze(dim))
  idx = Tensor.arange(orig_len).reshape(tuple(orig_len if i == dim else 1 for i in range(x.ndim)))
  idx = (cond * idx.unsqueeze(dim + 1)).sum(dim)
  return x, idx
@_install
def argsort(self, dim=-1, descending=False): return self.sort(dim, descending)[1]
@_install
def topk(self, k, dim=-1, largest=True, sorted_=True):
  if not sorted_: raise NotImplementedError("topk with sorted_=False is not supported")
  if k > self.shape[dim := self._resolve_dim(dim)]: raise ValueError(f"selected index {k=} is out of range")
  x, idx = self.sort(dim, descending=largest)
  topk_shape = tuple(k if i == dim else None for i in range(self.ndim))
  return x.shrink_to(topk_shape), idx.shrink_to(topk_shape)
@_install
def interpolate(self, size, mode="linear", align_corners=False):
  assert isinstance(size, (tuple, list)) and all_int(size) and 0 < len(size) <= self.ndim, f"invalid {size=}"
  assert mode in ("linear", "nearest", "nearest-exact"), "only supports linear, nearest or nearest-exact interpolate"
  assert not (align_corners and mode != "linear"), "align_corners option can only be set with the interpolating mode linear"
  x, expand = self, list(self.shape)
  for i in range(-1, -len(size) - 1, -1):
    in_sz, reshape = int(self.shape[i]), [1] * self.ndim
    reshape[i] = expand[i] = size[i]
    if mode == "linear":
      arr = Tensor.arange(size[i])
      num, den = (arr * (in_sz - 1), size[i] - 1) if align_corners else ((arr * 2 + 1) * in_sz - size[i], size[i] * 2)
      num = num.clip(0, (in_sz - 1) * den)
      low, high, perc = [y.reshape(reshape).expand(expand) for y in (num // den, (num + den - 1) // den, (num % den).cast(dtypes.float32) / den)]
      x = x.gather(i, low).lerp(x.gather(i, high), perc)
    else:
      scale, arr = in_sz / size[i], Tensor.arange(size[i], dtype=dtypes.float32)
      index = (scale * (arr + 0.5) if mode == "nearest-exact" else scale * arr).cast(dtypes.int32).reshape(reshape).expand(expand)
      x = x.gather(i, index)
  return x.cast(self.dtype)
@staticmethod
def _einsum(formula, *operands, dtype=None):
  import string
  xs, formula = list(argfix(*operands)), formula.replace(" ", "")
  if "..." in formula:
    ell, lhs = "".join(c for c in string.ascii_letters if c not in formula), (formula.split("->") + [""])[0]
    ell_n = [max(0, x.ndim - len(s) + 3) if "..." in s else 0 for s, x in zip(lhs.split(","), xs)]
    for i, (s, x) in enumerate(zip(inputs := lhs.split(","), xs)): inputs[i] = s.replace("...", ell[max(ell_n) - ell_n[i]:max(ell_n)])
    lhs, auto = ",".join(inputs), "".join(sorted(c for c in lhs if lhs.count(c) == 1 and c.isalpha() and c not in ell))
    formula = f"{lhs}->{formula.split('->')[1].replace('...', ell[:max(ell_n)]) if '->' in formula else ell[:max(ell_n)] + auto}"
  lhs, rhs = formula.split("->") if "->" in formula else (formula, "".join(sorted(c for c in formula if formula.count(c) == 1 and c.isalpha())))
  inputs = lhs.split(",")
  if len(xs) != len(inputs): raise ValueError(f"number of operands doesn't match, expected {len(inputs)}, got {len(xs)}")
  for i, (s, x) in enumerate(zip(inputs, xs)):
    for c in set(s):
      while s.count(c) > 1:
        j, k, n = s.index(c), s.index(c, s.index(c) + 1), x.shape[s.index(c)]
        perm = [d for d in range(x.ndim) if d not in (j, k)] + [j, k]
        x = x.permute(perm).flatten(-2).pad(((0, 0),) * (x.ndim - 2) + ((0, n),)).unflatten(-1, (n, n + 1))[..., 0] if x.ndim > 2 else x.diagonal()
        s = s[:k] + s[k + 1:]
    inputs[i], xs[i] = s, x
  sz = merge_dicts([dict(zip(s, x.shape)) for s, x in zip(inputs, xs)])
  alpha = sorted(sz)
  xs = [x.permute(*[s.index(c) for c in sorted(s)]).reshape([sz[c] if c in s else 1 for c in alpha]) if s else x for s, x in zip(inputs, xs)]
  return xs[0].uprod(*xs[1:]).sum([i for i, c in enumerate(alpha) if c not in rhs], dtype=dtype).permute(_argsort_list(_argsort_list(list(rhs))))
Tensor.einsum = _einsum

_ts_matmul, _ts_dot = Tensor.matmul, Tensor.dot
@_install
def dot(self, w, dtype=None):
  if dtype is None: return _ts_dot(self, w)
  x, dx, dw = self, self.ndim, w.ndim
  if not (dx > 0 and dw > 0): raise RuntimeError(f"both tensors need to be at least 1D, got {dx}D and {dw}D")
  if x.shape[-1] != w.shape[axis_w := -min(w.ndim, 2)]: raise RuntimeError(f"cannot dot {x.shape} and {w.shape}")
  x = x.reshape(*x.shape[0:-1], *[1] * min(dx - 1, dw - 1, 1), x.shape[-1])
  w = w.reshape(*w.shape[0:-2], *[1] * min(dx - 1, dw - 1, 1), *w.shape[axis_w:]).transpose(-1, axis_w)
  # a wider accumulation dtype takes the products in it too: the reference's CPU kernels multiply half inputs in
  # float (C promotes __fp16), and a half product of two halves would round away what the float sum keeps
  if dtypes.is_float(acc := to_dtype(dtype)) and acc.itemsize > max(x.dtype.itemsize, w.dtype.itemsize): x, w = x.cast(acc), w.cast(acc)
  return (x * w).sum(-1, dtype=dtype).cast(to_dtype(dtype))
@_install
def matmul(self, x, reverse=False, dtype=None): return x.dot(self, dtype=dtype) if reverse else self.dot(x, dtype=dtype)

@_install
def conv_transpose2d(self, weight, bias=None, groups=1, stride=1, dilation=1, padding=0, output_padding=0):
  x, w = self, weight.unflatten(0, (groups, -1)).transpose(1, 2).flip(*range(3, len(weight.shape) + 1))
  HW = weight.shape[2:]
  padding = flat_to_grouped(resolve_pool_pads(padding, len(HW)))
  stride, dilation, output_padding = [make_tuple(x, len(HW)) for x in (stride, dilation, output_padding)]
  if any(s > 1 for s in stride):
    x = x.reshape(None, None, *flatten((k, 1) for k in x.shape[2:]))
    x = x.pad((None, None, *flatten((None, (0, s - 1)) for s in stride)))
    x = x.reshape(None, None, *[k * s for k, s in zip(x.shape[2::2], stride)])
    x = x.shrink_to(None, None, *[k - (s - 1) for k, s in zip(x.shape[2:], stride)])
  padding = flatten((((k - 1) * d - pB, (k - 1) * d - pA + op) for k, d, (pB, pA), op in reversed(list(zip(HW, dilation, padding, output_padding)))))
  return x.conv2d(w.flatten(end_dim=1), groups=groups, bias=bias, dilation=dilation, padding=padding)

# neural network (functional)
@_install
def sequential(self, ll): return functools.reduce(lambda x, f: f(x), ll, self)
@_install
def layernorm(self, axis=-1, eps=1e-5):
  y = (self - self.mean(axis, keepdim=True))
  return y.mul((y * y).mean(axis, keepdim=True).add(eps).rsqrt())
@_install
def batchnorm(self, weight, bias, mean, invstd, axis=1):
  axis_ = argfix(axis)
  shape = tuple(s if ax in axis_ else 1 for ax, s in enumerate(self.shape))
  x = self - mean.reshape(shape)
  if weight is not None: x = x * weight.reshape(shape)
  ret = x.mul(invstd.reshape(shape) if len(invstd.shape) == len(axis_) else invstd)
  return (ret + bias.reshape(shape)) if bias is not None else ret
@_install
def dropout(self, p=0.5):
  if not 0 <= p <= 1: raise ValueError(f"{p=} is out of range [0, 1]")
  if not TRAINING or p == 0: return self
  if p == 1: return self.const_like(0)
  return (self.rand_like(dtype=dtypes.default_float, contiguous=False) >= p).contiguous().where(self, 0) / (1.0 - p)
@_install
def scaled_dot_product_attention(self, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, enable_gqa=False):
  if enable_gqa:
    key = key.repeat_interleave(int(self.shape[-3] // key.shape[-3]), dim=-3)
    value = value.repeat_interleave(int(self.shape[-3] // value.shape[-3]), dim=-3)
  q = self
  qk = q.matmul(key.transpose(-2, -1), dtype=least_upper_dtype(q.dtype, key.dtype, dtypes.float32)) / math.sqrt(q.shape[-1])
  if is_causal:
    if attn_mask is not None: raise RuntimeError("cannot set attn_mask when is_causal=True")
    attn_mask = qk.const_like(True, dtypes.bool).tril()
  if attn_mask is not None:
    if attn_mask.dtype == dtypes.bool: attn_mask = attn_mask.where(0, -float("inf"))
    qk = qk + attn_mask
  return qk.cast(self.dtype).softmax(-1).dropout(dropout_p) @ value
@_install
def _do_reduction(self, reduction="mean"):
  if reduction == "none": return self
  if reduction == "sum": return self.sum()
  if reduction == "mean": return self.mean()
  raise ValueError(f"{reduction=} must be one of ('none', 'sum', 'mean')")
@_install
def binary_crossentropy(self, Y, reduction="mean"):
  return (-Y * self.log() - (1 - Y) * (1 - self).log())._do_reduction(reduction)
@_install
def binary_crossentropy_logits(self, Y, reduction="mean", pos_weight=None):
  log_p, log_1_minus_p = self.logsigmoid(), (-self).logsigmoid()
  return (-((1 if pos_weight is None else pos_weight) * Y * log_p + (1 - Y) * log_1_minus_p))._do_reduction(reduction)
@_install
def sparse_categorical_crossentropy(self, Y, ignore_index=-1, label_smoothing=0.0, reduction="mean"):
  assert 0.0 <= label_smoothing <= 1.0, "label_smoothing must be in [0.0, 1.0]"
  if Y.device is not None and self.device is not None and Y.device != self.device:
    raise RuntimeError(f"expected Y and self on the same device, {Y.device=}, {self.device=}")
  log_probs = self.log_softmax()
  loss_mask = Y.ne(ignore_index) if ignore_index != -1 else Y.const_like(True, dtypes.bool)
  y = Y.unsqueeze(-1)._one_hot_along_dim(self.shape[-1], dim=-1) * loss_mask.unsqueeze(-1)
  smoothing = label_smoothing * (log_probs.mean(-1) * loss_mask)
  unreduced = ((1 - label_smoothing) * (log_probs * y).sum(-1) + smoothing)
  return -unreduced.sum() / loss_mask.sum() if reduction == "mean" else -unreduced._do_reduction(reduction)
@_install
def cross_entropy(self, Y, reduction="mean", label_smoothing=0.0):
  assert 0.0 <= label_smoothing <= 1.0, "label_smoothing must be in [0.0, 1.0]"
  classes_dim = 0 if self.ndim == 1 else 1
  if self.shape != Y.shape:
    if self.max(classes_dim).shape != Y.shape: raise RuntimeError(f"shape mismatch: {self.shape=}, {Y.shape=}")
    Y = Y.unsqueeze(classes_dim)._one_hot_along_dim(num_classes=self.shape[classes_dim], dim=classes_dim)
  Y = (1 - label_smoothing) * Y + label_smoothing / int(Y.shape[classes_dim])
  return -self.log_softmax(classes_dim).mul(Y).sum(classes_dim)._do_reduction(reduction)
@_install
def nll_loss(self, Y, weight=None, ignore_index=None, reduction="mean"):
  weight = Y.const_like(1) if weight is None else weight.gather(0, Y.flatten()).reshape(Y.shape)
  masked_weight = weight if ignore_index is None else weight * Y.ne(ignore_index)
  nll = -self.gather(1, Y.unsqueeze(1)).squeeze(1) * masked_weight
  return nll.sum() / masked_weight.sum() if reduction == "mean" else nll._do_reduction(reduction)

# scatter / masked selection / linear algebra / rearrange (tinygrad mixin/op.py, movement.py)
# op.py:_pre_scatter
@_install
def _pre_scatter(self, dim, index, src) :
  if index.device is not None and self.device is not None and index.device != self.device:
    raise RuntimeError(f"expected index and self on the same device, {index.device=}, {self.device=}")
  if src.device is not None and self.device is not None and src.device != self.device:
    raise RuntimeError(f"expected src and self on the same device, {src.device=}, {self.device=}")
  dim = self._resolve_dim(dim)
  assert index.ndim == self.ndim == src.ndim, f"self.ndim, index.ndim and src.ndim must all equal, {self.ndim=} {index.ndim=} {src.ndim=}"
  assert all((d == dim or self_ >= index_) and src_ >= index_ for d,(self_,index_,src_) in enumerate(zip(self.shape, index.shape, src.shape))), \
    f"All dimensions of {index.shape=} should be <= to all dimensions of {src.shape=} and all dimensions except dimension {dim} of {self.shape=}"
  if self.dtype != src.dtype: raise RuntimeError(f"expect {self.dtype=} to be equal to {src.dtype=}")
  # shrink src to index shape to shrink away the unused values
  src = src.shrink_to(index.shape)
  # prepare src and mask for reduce with respect to dim
  src = src.unsqueeze(-1).expand(*src.shape, self.shape[dim]).transpose(-1, dim)
  mask = index.unsqueeze(-1)._one_hot_along_dim(self.shape[dim]).transpose(-1, dim)
  # pad src and mask to self.shape so that reduce can be done with padded values as no-ops
  return src.pad_to(*self.shape, None), mask.pad_to(*self.shape, None)

# op.py:scatter_reduce
@_install
def scatter_reduce(self, dim, index, src, reduce,
                   include_self=True):
  src, mask = self._pre_scatter(dim, index, src)
  def _inv_mask(a, b): return mask.any(-1).logical_not().where(a, b)
  if reduce == "sum": return mask.where(src, 0).sum(-1).add(self if include_self else _inv_mask(self, 0))
  if reduce == "prod": return mask.where(src, 1).prod(-1).mul(self if include_self else _inv_mask(self, 1))
  if reduce == "amax": return mask.where(src, m := dtypes.min(src.dtype)).max(-1).maximum(self if include_self else _inv_mask(self, m))
  if reduce == "amin": return mask.where(src, m := dtypes.max(src.dtype)).min(-1).minimum(self if include_self else _inv_mask(self, m))
  if reduce == "mean":
    count = mask.where(1, 0).sum(-1).add(1 if include_self else _inv_mask(1, 0))
    return mask.where(src, 0).sum(-1).add(self if include_self else _inv_mask(self, 0)).div(count)
  raise RuntimeError(f"{reduce=} must be one of 'sum', 'prod', 'mean', 'amax', 'amin'")

# op.py:scatter
@_install
def scatter(self, dim, index, src, reduce=None):
  if reduce not in {None, "add", "multiply"}: raise TypeError(f"{reduce=} must be one of None, 'multiply', or 'add'")
  if isinstance(src, (int, float, bool)): src = _const_full(index.shape, src, self.dtype)
  elif reduce: raise TypeError("non-scalar src is not supported with reduce arg. use scatter_reduce")
  if reduce == "add": return self.scatter_reduce(dim, index, src, "sum", include_self=True)
  if reduce == "multiply": return self.scatter_reduce(dim, index, src, "prod", include_self=True)
  src, mask = self._pre_scatter(dim, index, src)
  return self._masked_merge(src, mask, (-1,))

# op.py:_masked_merge
@_install
def _masked_merge(self, values, mask, axes):
  for dim in reversed(axes):
    mask, values = functools.reduce(lambda x,y: (x[0]|y[0], y[0].where(y[1], x[1])), zip(mask.split(1, dim), values.split(1, dim)))
  # remove extra dims from reduce
  for dim in reversed(axes): mask, values = mask.squeeze(dim), values.squeeze(dim)
  # select from values for each True element in mask else select from self
  return mask.where(values, self)

# op.py:masked_select
@_install
def masked_select(self, mask, size=None, fill_value=0):
  if not dtypes.is_bool(mask.dtype): raise RuntimeError(f"masked_select expects bool mask tensor, got {mask.dtype}")
  x, mask = self.flatten(), mask._broadcast_to(self.shape).flatten()
  mask_cumsum = mask.cumsum()
  if size is None:
    counts = _const_full((mask_cumsum[-1].item() if mask.numel() else 0,), 0, dtypes.int32)
    return x[counts.scatter(0, mask_cumsum, 1, reduce='add').cumsum()]
  counts = _const_full((size,), 0, dtypes.int32).scatter(0, mask_cumsum, 1, reduce='add')
  return (Tensor.arange(size) < mask.sum()).where(x[counts.cumsum()], fill_value).cast(self.dtype)

# op.py:nonzero
@_install
def nonzero(self, size=None, fill_value=0):
  if self.ndim == 0:
    return Tensor.zeros(size if size is not None else int(self.ne(0).item()), 0, dtype=dtypes.int32, device=self.device)
  mask = self.ne(0).flatten()
  indices = Tensor.stack(*[Tensor.arange(s).reshape(*[1]*i, s, *[1]*(self.ndim-i-1)).expand(self.shape).flatten()
                           for i, s in enumerate(self.shape)], dim=-1)
  return indices.masked_select(mask.unsqueeze(-1).expand(*mask.shape, self.ndim),
                               size=size*self.ndim if size is not None else None, fill_value=fill_value).reshape(-1, self.ndim)

# op.py:max_unpool2d
@_install
def max_unpool2d(self, indices, kernel_size=(2,2), stride=None, dilation=1, padding=0,
                 output_size=None):
  bs,c,*spatial_shape = self.shape
  if output_size is None:
    k_,d_,s_ = (make_tuple(x, len(spatial_shape)) for x in (kernel_size, dilation, stride if stride is not None else kernel_size))
    p_ = flat_to_grouped(resolve_pool_pads(padding, len(spatial_shape)))
    # https://arxiv.org/pdf/1603.07285 inverse of relationship 15 in section 5.1.
    output_size = tuple((i-1)*s - (pB+pA) + (d*(k-1)+1) for i,k,d,s,(pA,pB) in zip(spatial_shape,k_,d_,s_,p_))
  else: output_size = output_size[-len(spatial_shape):]
  ret = (indices.reshape(bs,c,1,-1)._one_hot_along_dim(prod(output_size), 2).where(self.reshape(bs,c,1,-1), 0)).sum(3)
  return ret.reshape(bs,c,*output_size)

# op.py:qr
@_install
def qr(self) :
  assert self.ndim > 1, f"expected two or more dimensions, got {self.ndim}"
  b_shape, m, n = self.shape[:-2], int(self.shape[-2]), int(self.shape[-1])
  R, Q = self, Tensor.eye(m, dtype=self.dtype).expand(b_shape + (m, m))
  idx = Tensor.arange(m)
  for i in range(min(m, n)):
    # full-length Householder reflector v with zeros above row i; w = tau*v is the rank-1 update factor
    at_i, x = idx.eq(i), (idx >= i).where(R[..., :, i], 0)
    norm = x.square().sum(-1, keepdim=True).sqrt()
    x0 = at_i.where(x, 0).sum(-1, keepdim=True)
    sgn, active = x0.ne(0).where(x0.sign(), 1), norm.ne(0)
    u0 = x0 + sgn * norm
    v = (at_i.where(u0, x) / active.where(u0, 1)).unsqueeze(-1)
    w = active.where(sgn * u0 / active.where(norm, 1), 0).unsqueeze(-1) * v
    R = R - w @ (v.transpose(-2, -1) @ R)
    Q = Q - (Q @ v) @ w.transpose(-2, -1)
  return Q, R

# op.py:svd
@_install
def svd(self, full_matrices = True) :
  assert self.ndim > 1, f"expected two or more dimensions, got {self.ndim}"
  b_shape, m, n = self.shape[:-2], int(self.shape[-2]), int(self.shape[-1])
  #preprocess the matrix
  Q, R = (self if m >= n else self.transpose(-2, -1)).qr()
  num, q_num = min(m, n), max(m, n)
  # TODO: codegen infinite loop without contiguous
  U = R[..., :num, :num].contiguous()
  V = Tensor.eye(num, dtype=self.dtype).expand(b_shape + (num, num)).contiguous()
  #prepare round robin pairing: identity on first half, reversed on second half
  permute = Tensor.arange(num//2, dtype=dtypes.int32).cat(
              Tensor.arange(num//2, num, dtype=dtypes.int32).flip(0))
  cols, h = Tensor.arange(num, dtype=dtypes.int32), num // 2
  eye_num = Tensor.eye(num, dtype=self.dtype).expand(b_shape + (num, num))
  def one_round_jacobi(U, V, permute):
    # permutation matrix P with P[a,b] = (a == permute[b]); first 2h columns are paired-column selectors
    P = cols.unsqueeze(1).eq(permute.unsqueeze(0)).cast(U.dtype)
    P_pair = P[..., :2*h]  # drops the runoff column for odd num
    # extract paired columns to compute Jacobi rotation params
    U_pair = U @ P_pair
    U_left, U_right = U_pair.split(h, -1)
    gamma = (U_left * U_right).sum(-2).reshape(b_shape + (1, h))
    alpha, beta = U_pair.square().sum(-2).unsqueeze(-2).split(h, -1)
    rot = gamma.ne(0)
    tau = (beta - alpha) / (2 * rot.where(gamma, 1))
    t = tau.ne(0).where(tau.sign(), 1) / (tau.abs() + (1 + tau.square()).sqrt())
    t = rot.where(t, 0)
    c = 1 / (1 + t.square()).sqrt()
    s = c * t
    # build rotation matrix R: identity + sum over pairs of 2x2 rotation deltas at (i_k, j_k) positions
    Mi, Mj = P_pair.transpose(-2, -1).split(h, -2)  # paired-column selectors, each shape (h, num)
    Mi_a, Mi_b = Mi.unsqueeze(-1), Mi.unsqueeze(-2)
    Mj_a, Mj_b = Mj.unsqueeze(-1), Mj.unsqueeze(-2)
    cc, ss = (c - 1).reshape(b_shape + (h, 1, 1)), s.reshape(b_shape + (h, 1, 1))
    R = eye_num + (cc * (Mi_a * Mi_b + Mj_a * Mj_b) + ss * (Mi_a * Mj_b - Mj_a * Mi_b)).sum(-3)
    U, V = U @ R, V @ R
    #prepare the next round robin pairings
    if num % 2 == 1: permute = (permute - 1) % num
    else: permute = permute[0].reshape(1).cat(((permute[1:num] - 2) % (num - 1)) + 1)
    return U, V, permute
  # classical Jacobi converges in ~4 sweeps; one full sweep is (num-1) rounds for even num
  for _ in range(4 * num): U, V, permute = one_round_jacobi(U, V, permute)
  #extract singular values and sort. construct U from Q
  S, indices = U.square().sum(-2).sqrt().sort(dim=-1, descending=True)
  new_indices = indices.unsqueeze(-2).expand(b_shape + (num, num))
  U = U.gather(-1, new_indices) / S.ne(0).where(S, 1).unsqueeze(-2)
  V = V.gather(-1, new_indices)
  # place U into the top-left num×num block of a q_num×q_num identity matrix
  pad_arg = (None,) * len(b_shape) + ((0, q_num - num), (0, q_num - num))
  eye_q = Tensor.eye(q_num, dtype=U.dtype).expand(b_shape + (q_num, q_num))
  eye_n = Tensor.eye(num, dtype=U.dtype).expand(b_shape + (num, num)).pad(pad_arg)
  U = Q @ (U.pad(pad_arg) + eye_q - eye_n)
  if not full_matrices: U = U[..., 0:num]
  return (U, S, V.transpose(-2, -1)) if m >= n else (V, S, U.transpose(-2, -1))

# movement.py:rearrange
@_install
def rearrange(self, formula, **sizes):
  def parse_side(s):
    """Parse one side of formula into (axis_names, dims) where dims are (start, end) index pairs for parens."""
    tokens = f" {s} ".replace("…", "...").replace("(", " ( ").replace(")", " ) ").replace(" ", "  ").replace(" 1 ", " ( ) ").split()
    lparens, rparens = [i for i, tok in enumerate(tokens) if tok == "("], [i for i, tok in enumerate(tokens) if tok == ")"]
    pairs = list(zip(lparens, rparens))
    assert len(lparens) == len(rparens) and sorted(flatten(pairs)) == flatten(pairs), "bracket mismatch"
    return [tok for tok in tokens if tok not in ("(", ")")], [(lp - 2*i, rp - 1 - 2*i) for i, (lp, rp) in enumerate(pairs)]

  assert formula.count("->") == 1, 'need exactly one "->" in formula'
  (lhs, unflatten_dims), (rhs, flatten_dims) = map(parse_side, formula.split("->"))

  for name in sizes: assert name in lhs, f"axis {name} is not used in transform"
  assert sorted(lhs) == sorted(rhs) and len(lhs) == len(set(lhs)), f"name mismatch in {formula}"
  for name in lhs+rhs: assert name == "..." or (name.isidentifier() and "_" not in (name[0], name[-1])), f"invalid axis name {name}"
  assert "..." not in flatten([lhs[s:e] for s, e in unflatten_dims]), f"cannot have collapsed ellipsis (...) in lhs of {formula}"
  assert lhs.count("...") <= 1, f"too many ellipses in {formula}"

  # resolve ellipsis
  if "..." in lhs:
    ell_len = len(self.shape) - len(lhs) + 1 + sum(e - s - 1 for s, e in unflatten_dims)
    lhs, rhs = map(lambda l: l[:(i := l.index("..."))] + [f"...{j}" for j in range(ell_len)] + l[i + 1:] if "..." in l else l, (lhs, rhs))
    def newdims(side, s, e): return (s + (ell_len - 1 if "...0" in side[:s] else 0), e + (ell_len - 1 if "...0" in side[:e] else 0))
    unflatten_dims, flatten_dims = [newdims(lhs, s, e) for s, e in unflatten_dims], [newdims(rhs, s, e) for s, e in flatten_dims]

  # unflatten -> permute -> flatten
  t = self
  for start, end in unflatten_dims: t = t.unflatten(start, tuple(sizes.get(lhs[i], -1) for i in range(start, end)))
  for i, name in enumerate(lhs):
    if name in sizes: assert sizes[name] == t.shape[i], f"size provided for dimension {name} incorrect"
  t = t.permute([lhs.index(name) for name in rhs])
  for start, end in reversed(flatten_dims): t = t.flatten(start, end - 1) if start < end else t.unsqueeze(start)
  return t

@_install
def to_(self, device):
  return self.replace(self.to(device))

# ---- random numbers (tinygrad's mixin/rand.py and Tensor._next_counter): threefry2x32 counters per device ----
# NOTE: as tinygrad: one THREEFRY op on the packed uint64 counter and key; codegen decomposes it into threefry2x32
# on the uint32 halves (no renderer has the op itself)
import hashlib as _hashlib, time as _time
Tensor._seed = int(_time.time())
Tensor._device_seeds = {}
Tensor._device_rng_counters = {}
_FINFO = {2: (5, 10), 4: (8, 23), 8: (11, 52)}
_ONE_BITS = {2: 0x3c00, 4: 0x3f800000, 8: 0x3ff0000000000000}

@staticmethod
def _manual_seed(seed=0): Tensor._seed, Tensor._device_seeds, Tensor._device_rng_counters = seed, {}, {}
Tensor.manual_seed = _manual_seed

@staticmethod
def _next_counter(device, num):
  if device not in Tensor._device_seeds:
    seed = [int.from_bytes(_hashlib.sha256(len(Tensor._device_seeds).to_bytes(4, "big")).digest(), "big") & 0xffffffff,
            Tensor._seed & 0xffffffff]
    Tensor._device_seeds[device] = Tensor(seed, device=device, dtype=dtypes.uint32)
    Tensor._device_rng_counters[device] = Tensor([0, 0], device=device, dtype=dtypes.uint32)
  counter = Tensor._device_rng_counters[device]
  new_low = counter[0:1] + (num & 0xffffffff)
  new_high = counter[1:2] + (num >> 32) + (new_low < counter[0])
  counter.assign(new_low.cat(new_high))
  low = counter[0:1] - (num & 0xffffffff)
  high = counter[1:2] - (num >> 32) - (counter[0] < (num & 0xffffffff))
  return Tensor._device_seeds[device], low.cat(high)
Tensor._next_counter = _next_counter

def _threefry_random_bits(key, counts0, counts1):
  x = (counts1.cast(dtypes.uint64) << 32) | counts0.cast(dtypes.uint64)
  x = x.threefry((key[1].cast(dtypes.uint64) << 32) | key[0].cast(dtypes.uint64))
  lo, hi = x.cast(dtypes.uint32), (x >> 32).cast(dtypes.uint32)
  # x.cast(uint32).cat((x >> 32).cast(uint32)): tinygrad's cat of equal sizes is a STACK (+ flatten); the engine has no
  # STACK movement op, so select along the new axis (the same kernel: E_{n}_2 with the stack axis upcast)
  n = lo.shape[0]
  return (Tensor.arange(2).reshape(2, 1) == 0).where(lo.reshape(1, n).expand(2, n), hi.reshape(1, n).expand(2, n)).flatten()

@staticmethod
def _random_bits(key, counter, num):
  low, high = counter[0:1], counter[1:2]
  bits = []
  for i in range(0, num, dtypes.max(dtypes.uint32)):
    chunk_num = min(num - i, dtypes.max(dtypes.uint32))
    c_low = low + (i & 0xffffffff)
    c_high = high + (i >> 32) + (c_low < low)
    new_key = _threefry_random_bits(key, c_low, c_high)
    counts0 = Tensor.arange(ceildiv(chunk_num, 2), dtype=dtypes.uint32)
    counts1 = counts0 + ceildiv(chunk_num, 2)
    bits.append(_threefry_random_bits(new_key, counts0, counts1)[:chunk_num])
  return bits[0].cat(*bits[1:]) if bits else counter[0:0]
Tensor.random_bits = _random_bits

def _bits_to_rand(bits, shape, dtype):
  nmant = dtypes.finfo(dtype)[1]
  uint_dtype = {1: dtypes.uint8, 2: dtypes.uint16, 4: dtypes.uint32, 8: dtypes.uint64}[dtype.itemsize]
  uint_bits = bits.bitcast(uint_dtype)
  one_bits = 0x3f80 if dtype is dtypes.bfloat16 else _ts._float_to_fp8(1.0, dtype) if dtype in dtypes.fp8s else _ONE_BITS[dtype.itemsize]
  return (uint_bits // 2**(dtype.itemsize * 8 - nmant)).bitwise_or(one_bits) \
    .bitcast(dtype)[:prod(shape)].sub(1).reshape(shape)

def _rand_impl(key, counter, shape, dtype, contiguous=True):
  bits = Tensor.random_bits(key, counter, ceildiv(prod(shape) * dtype.itemsize, 4))
  out = _bits_to_rand(bits, shape, dtype)
  return out.contiguous() if contiguous else out

@staticmethod
def _rand(*shape, device=None, dtype=None, contiguous=True):
  dt = to_dtype(dtype or dtypes.default_float)
  if not dtypes.is_float(dt) or dt in dtypes.weaks: raise ValueError(f"rand only supports concrete float dtypes, got {dt}")
  if not all_int(shape := argfix(*shape)) or not all(s >= 0 for s in shape): raise ValueError(f"invalid input {shape=}")
  if device is not None and not isinstance(device, str): raise ValueError(f"rand only supports single device, got {device=}")
  device = Device.canonicalize(device)
  key, counter = Tensor._next_counter(device, ceildiv(prod(shape) * dt.itemsize, 4))
  return _rand_impl(key, counter, shape, dt, contiguous=contiguous)
Tensor.rand = _rand

@_install
def rand_like(self, **kwargs):
  if isinstance(self.device, tuple):
    _no_multi_like_device(self, kwargs.pop("device", None))
    dtype = kwargs.pop("dtype", self.dtype)
    return self._multi_like(lambda shape, dev: Tensor.rand(*shape, dtype=dtype, device=dev, **kwargs))
  return Tensor.rand(*self.shape, device=kwargs.pop("device", self.device), dtype=kwargs.pop("dtype", self.dtype), **kwargs)
@_install
def randn_like(self, dtype=None, **kwargs):
  if (dt := to_dtype(dtype or self.dtype)) in dtypes.weaks and dtype is None: raise ValueError(f"randn_like requires an explicit dtype for {dt}")
  src = Tensor.stack(self, self).rand_like(**{**kwargs, "dtype": dtypes.float32})
  return src[0].mul(2 * math.pi).cos().mul((1 - src[1]).log().mul(-2).sqrt()).cast(dt)
@staticmethod
def _randn(*shape, dtype=None, **kwargs): return Tensor.empty(*shape, **kwargs).randn_like(dtype=dtype)
Tensor.randn = _randn
@staticmethod
def _randint(*shape, low=0, high=10, dtype=dtypes.int32, **kwargs):
  if not all_int([low, high]): raise TypeError(f"{low=} and {high=} must be integers")
  if not dtypes.is_int(dtype := to_dtype(dtype)): raise TypeError(f"{dtype=} must be int")
  if low >= high: raise ValueError(f"Tensor.randint requires low < high, got {low=}, {high=}")
  return Tensor.uniform(*shape, low=low, high=high, dtype=dtype, **kwargs)
Tensor.randint = _randint
@staticmethod
def _normal(*shape, mean=0.0, std=1.0, **kwargs):
  if std < 0: raise ValueError(f"Tensor.normal requires std >= 0, got {std=}")
  return std * Tensor.randn(*shape, **kwargs) + mean
Tensor.normal = _normal
@staticmethod
def _uniform(*shape, low=0.0, high=1.0, dtype=None, **kwargs):
  if not all_int(shape := argfix(*shape)) or not all(s >= 0 for s in shape): raise ValueError(f"invalid input {shape=}")
  if low >= high: raise ValueError(f"Tensor.uniform requires low < high, got {low=}, {high=}")
  return ((high - low) * Tensor.rand(*shape, **kwargs)).cast(dtype or dtypes.default_float) + low
Tensor.uniform = _uniform
@staticmethod
def _scaled_uniform(*shape, **kwargs): return Tensor.uniform(*shape, low=-1.0, high=1.0, **kwargs).mul(prod(argfix(*shape)) ** -0.5)
Tensor.scaled_uniform = _scaled_uniform
@staticmethod
def _glorot_uniform(*shape, **kwargs):
  bound = (6 / (argfix(*shape)[0] + prod(argfix(*shape)[1:]))) ** 0.5
  return Tensor.uniform(*shape, low=-bound, high=bound, **kwargs)
Tensor.glorot_uniform = _glorot_uniform
@staticmethod
def _kaiming_uniform(*shape, a=0.01, **kwargs):
  bound = (6 / (1 + a ** 2) / prod(argfix(*shape)[1:])) ** 0.5
  return Tensor.uniform(*shape, low=-bound, high=bound, **kwargs)
Tensor.kaiming_uniform = _kaiming_uniform
@staticmethod
def _kaiming_normal(*shape, a=0.01, **kwargs):
  std = (2 / (1 + a ** 2) / prod(argfix(*shape)[1:])) ** 0.5
  return Tensor.normal(*shape, mean=0.0, std=std, **kwargs)
Tensor.kaiming_normal = _kaiming_normal
@staticmethod
def _randperm(n, device=None, dtype=dtypes.int32, **kwargs): return Tensor.rand(n, device=device, **kwargs).argsort().cast(dtype)
Tensor.randperm = _randperm
@_install
def multinomial(self, num_samples=1, replacement=False):
  assert 1 <= self.ndim <= 2 and num_samples > 0, f"{self.ndim=} must be 1 or 2 dim, {num_samples=} must be positive"
  weight = self.unsqueeze(0) if self.ndim == 1 else self
  assert replacement or num_samples <= weight.shape[1], "no replacement samples must not exceed population size"
  if replacement or num_samples == 1:
    cdf = (cw := weight.cumsum(1).float()) / cw[:, -1].unsqueeze(1)
    unif_samples = Tensor.rand(num_samples, cdf.shape[0], 1).to(self.device)
    indices = (unif_samples >= cdf).sum(2).permute((1, 0))
  else:
    indices = (weight.rand_like(dtype=dtypes.float32).log2() / weight).topk(num_samples, dim=1)[1]
  return (indices.squeeze(0) if self.ndim == 1 else indices).cast(dtypes.int32)


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

# ---- the keyword arguments of tinygrad's signatures over the bound ops, and the creation/ops entries that are pure Python ----
_c_full, _c_gelu, _c_linear, _c_conv2d = Tensor.full, Tensor.gelu, Tensor.linear, Tensor.conv2d
_c_avg_pool2d, _c_max_pool2d = Tensor.avg_pool2d, Tensor.max_pool2d

def _full(shape, fill_value, dtype=None, device=None, buffer=True):
  if buffer: return _c_full(shape, fill_value, dtype, device)
  # buffer=False: the broadcast CONST itself, no buffer (tinygrad's const(...).reshape(...).expand(...))
  new_shape = argfix(shape)
  return _const_full(new_shape, fill_value, to_dtype(dtype) if dtype is not None else dtypes.from_py(fill_value))
Tensor.full = staticmethod(_full)

# the first argument of the movement ops has tinygrad's name, so reshape(shape=...) works
for _name, _arg in (("reshape", "shape"), ("view", "shape"), ("expand", "shape"), ("permute", "order"), ("flip", "axis")):
  _c = getattr(Tensor, _name)
  _fn = eval(f"lambda self, {_arg}, *args: _c(self, {_arg}, *args)", {"_c": _c})
  _fn.__name__ = _name
  _install(_fn)

@_install
def gelu(self, approximate="tanh"):
  if approximate == "tanh": return _c_gelu(self)
  if approximate == "none": return self * 0.5 * (1.0 + (self / math.sqrt(2)).erf())
  raise RuntimeError(f"gelu: {approximate=} is not supported")

@_install
def linear(self, weight, bias=None, dtype=None):
  if dtype is None: return _c_linear(self, weight, bias)
  dt = to_dtype(dtype)
  return self.cast(dt).linear(weight.cast(dt), bias.cast(dt) if bias is not None else bias)

@_install
def conv2d(self, weight, bias=None, groups=1, stride=1, dilation=1, padding=0, dtype=None):
  if dtype is None: return _c_conv2d(self, weight, bias, groups, stride, dilation, padding)
  # with dtype: the pooled windows times the weights, summed in `dtype` (tinygrad's conv2d graph)
  (bs, cin_), (cout, cin), HW = self.shape[:2], weight.shape[:2], weight.shape[2:]
  if groups * cin != cin_ or len(self.shape) != len(weight.shape):
    raise ValueError(f"conv2d: input shape {self.shape} does not match the weight shape {weight.shape} ({groups * cin} vs. {cin_})")
  pads = resolve_pool_pads(padding, len(HW))
  x = self._pad_constant(((0, 0),) * (self.ndim - len(HW)) + flat_to_grouped(pads), 0.0)._pool(HW, stride, dilation)
  rcout, oyx = cout // groups, x.shape[2:-len(HW)]
  x = x.reshape(bs, groups, cin, 1, *oyx, *HW).expand(bs, groups, cin, rcout, *oyx, *HW)
  x = x.permute(0, 1, 3, *[4 + i for i in range(len(oyx))], 2, *[4 + len(oyx) + i for i in range(len(HW))])
  w = weight.reshape(1, groups, rcout, *[1] * len(oyx), cin, *HW)
  ret = (x * w).sum([-1 - i for i in range(1 + len(oyx))], keepdim=True, dtype=dtype).reshape(bs, cout, *oyx)
  return ret if bias is None else ret.add(bias.reshape(1, -1, *[1] * len(HW)))

@_install
def _apply_ceil_mode(self, pads, k_, s_, d_):
  # extra padding after each spatial dim so the window count is ceil((i+pB+pA-(d*(k-1)+1))/s)+1, minus windows that would start in the padding
  (d_, s_), i_ = (make_tuple(x, len(k_)) for x in (d_, s_)), self.shape[-len(k_):]
  grouped = list(flat_to_grouped(pads))
  o_ = [ceildiv(i + pB + pA - (d * (k - 1) + 1), s) + 1 for i, d, k, s, (pB, pA) in zip(i_, d_, k_, s_, grouped)]
  for dim, (o, i, s, k, d, (pB, pA)) in enumerate(zip(o_, i_, s_, k_, d_, grouped)):
    grouped[dim] = (pB, pA + s * (o - 1) + (d * (k - 1) + 1) - (i + pB + pA) - max(s * (o - 1) - (pB + i - 1), 0))
  return flatten(reversed(grouped))

@_install
def avg_pool2d(self, kernel_size=(2, 2), stride=None, dilation=1, padding=0, ceil_mode=False, count_include_pad=True):
  if not ceil_mode and count_include_pad: return _c_avg_pool2d(self, kernel_size, stride, dilation, padding)
  k_ = make_tuple(kernel_size, 2)
  axis, s_ = tuple(range(-len(k_), 0)), stride if stride is not None else k_
  def pool(x, pads): return x._pad_constant(((0, 0),) * (x.ndim - len(k_)) + flat_to_grouped(pads), 0.0)._pool(k_, s_, dilation)
  reg_pads = resolve_pool_pads(padding, len(k_))
  pads = self._apply_ceil_mode(reg_pads, k_, s_, dilation) if ceil_mode else reg_pads
  if not count_include_pad: return pool(self, pads).sum(axis) / pool(self.const_like(1), pads).sum(axis)
  # ceil_mode counting the regular padding but not the ceil padding
  ones = self._pad_constant(((0, 0),) * (self.ndim - len(k_)) + flat_to_grouped(reg_pads), 0.0).const_like(1)
  return pool(self, pads).sum(axis) / pool(ones, tuple(cp - rp for cp, rp in zip(pads, reg_pads))).sum(axis)

@_install
def max_pool2d(self, kernel_size=(2, 2), stride=None, dilation=1, padding=0, ceil_mode=False, return_indices=False):
  if not ceil_mode and not return_indices: return _c_max_pool2d(self, kernel_size, stride, dilation, padding)
  k_ = make_tuple(kernel_size, 2)
  axis, s_ = tuple(range(-len(k_), 0)), stride if stride is not None else k_
  pads = resolve_pool_pads(padding, len(k_))
  if ceil_mode: pads = self._apply_ceil_mode(pads, k_, s_, dilation)
  pooled = self._pad_constant(((0, 0),) * (self.ndim - len(k_)) + flat_to_grouped(pads), dtypes.min(self.dtype))._pool(k_, s_, dilation)
  if not return_indices: return pooled.max(axis)
  # indices: count down from the spatial size so the max of the masked windows picks the first maximum
  spatial_sz = int(prod(spatial_shape := self.shape[-len(k_):]))
  idx = Tensor.arange(spatial_sz, 0, -1).reshape(spatial_shape)
  m = pooled.eq(pooled.max(axis, keepdim=True))
  idx = m * idx._pad_constant(((0, 0),) * (idx.ndim - len(k_)) + flat_to_grouped(pads), dtypes.min(idx.dtype))._pool(k_, s_, dilation)
  return pooled.max(axis), spatial_sz - idx.max(axis)

@_install
def shard(self, devices, axis=None):
  if self.device is None: return self
  if not isinstance(self.device, str): raise RuntimeError("can't shard a multi-device tensor")
  if len(devices) == 1: return self.to(devices[0])
  return self._shard(tuple(devices), None if axis is None else self._resolve_dim(axis)).is_param_(self.is_param)
@_install
def shard_(self, devices, axis=None): return self.replace(self.shard(devices, axis))
@_install
def shard_like(self, y):
  # as y is placed: y's device (a tensor on one device), nothing for a deviceless y
  if y.device is None: return self
  if isinstance(y.device, str): return self.to(y.device)
  if isinstance(self.device, tuple) and (y.device, y.uop.axis) == (self.device, self.uop.axis): return self
  return self.shard(y.device, y.uop.axis)

@staticmethod
def _from_blob(ptr, shape, **kwargs):
  # the memory at ptr as a realized tensor: each realize reads it as it is then (the caller keeps it alive)
  dtype = to_dtype(kwargs.pop("dtype", None) or dtypes.default_float)
  return Tensor._from_address(ptr, tuple(shape), dtype, kwargs.pop("device", None))
Tensor.from_blob = _from_blob

@staticmethod
def _from_url(url, gunzip=False, **kwargs):
  # the resource's bytes as a uint8 tensor (tinygrad returns a DISK tensor of the cached download; tinyscope has no DISK device)
  import urllib.request, gzip
  with urllib.request.urlopen(url, timeout=30) as r: data = r.read()
  return Tensor(gzip.decompress(data) if gunzip else data, **kwargs)
Tensor.from_url = _from_url

# ---- indexing (tinygrad's _getitem: shrink/flip/stride views, int collapse, None injection, tensor indices) ----
def _parse_view_index(index, size):
  if index is None: return {"size": 1, "boundary": (0, 1), "stride": 1, "collapse_dim": False}
  if isinstance(index, int):
    if index >= size or index < -size: raise IndexError(f"{index=} is out of bounds with {size=}")
    b = index if index >= 0 else index + size
    return {"size": size, "boundary": (b, b + 1), "stride": 1, "collapse_dim": True}
  if isinstance(index, slice) and any(isinstance(s, UOp) for s in (index.start, index.stop)):
    # a bound Variable (or an expression of one) as a bound: a shrink whose size is symbolic (its largest value here)
    if index.step not in (None, 1): raise TypeError(f"slice {index=} is not supported: a symbolic slice has step 1")
    def bound(b, default): return default if b is None else b if isinstance(b, UOp) else b + size if b < 0 else b
    return {"size": None, "boundary": (bound(index.start, 0), bound(index.stop, size)), "stride": 1, "collapse_dim": False}
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

def _flatten_seq(x): return [y for xi in x for y in _flatten_seq(xi)] if isinstance(x, (list, tuple)) else [x]
def _seq_shape(x): return (len(x),) + _seq_shape(x[0]) if isinstance(x, (list, tuple)) and len(x) else (len(x),) if isinstance(x, (list, tuple)) else ()

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
      # nested lists/tuples of ints are a tensor index; bools or floats in them are not (the reference's inference)
      flat = _flatten_seq(index)
      if not flat or all(isinstance(i, bool) for i in flat) or not all_int(flat): raise IndexError(f"{index=} contains non-int element")
      index = Tensor([i + size if i < 0 else i for i in flat], device=self.device, dtype=dtypes.int32).reshape(_seq_shape(index))
    if isinstance(index, Tensor):
      if not dtypes.is_int(index.dtype): raise IndexError(f"index dtype {index.dtype} is not supported")
      p = {"size": size, "boundary": (0, size), "stride": 1, "collapse_dim": False, "index": (index < 0).where(index + size, index)}
    else: p = {**_parse_view_index(index, size), "index": index}
    parsed.append(p)
    if index is not None: dim += 1
  return parsed

def _tensor_index_mask(x, tops):
  # several tensor indices (or any, for setitem): one-hot masks broadcast together and multiplied, the indexed dims
  # summed away; returns the gathered x, the mask and how they were laid out (the reference's advanced indexing)
  dims, tensors = [d for d, _ in tops], [t for _, t in tops]
  big_shape = _broadcast_shape(*(t.shape for t in tensors))
  pre_reduce_shape = x.shape[:dims[0]] + big_shape + x.shape[dims[0]:]
  mask = None
  for d, t in zip(dims, tensors):
    try: i = t.reshape(t.shape + (1,) * (x.ndim - dims[0])).expand(pre_reduce_shape)
    except (ValueError, RuntimeError) as err: raise IndexError(f"cannot broadcast indices: {err}") from err
    m = i == Tensor.arange(x.shape[d]).reshape((x.shape[d],) + (1,) * (x.ndim - d - 1))
    mask = m if mask is None else mask * m
  reshape_arg = x.shape[:dims[0]] + (1,) * len(big_shape) + x.shape[dims[0]:]
  sum_axis = tuple(d + len(big_shape) for d in dims)
  g = mask.where(x.reshape(reshape_arg), 0).sum(sum_axis, dtype=x.dtype)
  permuted = dims[0] != 0 and len(dims) != 1 and tuple(dims) != tuple(range(dims[0], dims[-1] + 1))
  if permuted:
    order = lambda y: y.permute(*range(dims[0], dims[0] + len(big_shape)), *range(0, dims[0]), *range(dims[0] + len(big_shape), y.ndim))
    mask, g = order(mask), order(g)
  return g, mask, dims, big_shape, sum_axis, permuted

@_install
def __getitem__(self, indices):
  parsed = _parse_indices(self, indices)
  mops = [p for p in parsed if p["index"] is not None]
  x = _apply_view_ops(self, mops)
  x_dims = [p for p in parsed if not p["collapse_dim"]]
  shape, k = [], 0  # x's dims are the mops'; a None index adds a dim of 1, an int removes its dim
  for p in parsed:
    if p["index"] is None:
      shape.append(1)
      continue
    if not p["collapse_dim"]: shape.append(x.shape[k] if p["size"] is None else p["size"])  # (a symbolic slice: the shrunk dim)
    k += 1
  x = x.reshape(tuple(shape))

  tops = [(d, p["index"]) for d, p in enumerate(x_dims) if isinstance(p["index"], Tensor)]
  if not tops: return self if x.uop == self.uop else x  # t[...] and t[:] are t, as the reference's
  if len(tops) == 1: return x._index_tensor(tops[0][0], tops[0][1])
  return _tensor_index_mask(x, tops)[0]

@_install
def __delitem__(self, indices): raise TypeError("Tensor does not support deleting items")

@_install
def __setitem__(self, indices, v):
  # a view of a realized buffer is assigned through the view (below); otherwise the whole tensor becomes
  # mask.where(v placed in the view, self), as tinygrad's masked form (tensor indices place v through their one-hot
  # mask first, the last of repeated indices winning), assigned to a buffer or replacing an unrealized value
  if self.dtype in dtypes.weaks: raise RuntimeError("cannot setitem into a weak tensor; it has no storage")
  if not isinstance(v, Tensor): v = Tensor(v, device=self.device, dtype=self.dtype)
  elif v.dtype in dtypes.weaks: v = v.cast(least_upper_dtype(self.dtype, v.dtype))
  # another live tensor reading self's lazy value would see the change (v and its own graph excepted)
  if self._has_other_uses(v): raise RuntimeError("can't setitem on a tensor with other uses")
  # t[i] += x assigned into the view t[i] first (AFTER(view, STORE(view, value))): use the computed value
  if v.uop.op is Ops.AFTER and len(v.uop.src) > 1 and v.uop.src[1].op is Ops.STORE: v = Tensor(v.uop.src[1].src[1])
  if v.dtype != self.dtype: raise RuntimeError(f"setitem dtype mismatch: {self.dtype=} != {v.dtype=}")
  # as the reference decides: a view of a buffer (t[i], t.T[i, j], t[::-1][0], t.detach()[i]) is assigned through the
  # view, so the buffer and every tensor of it see the write; tensor indices assign the masked whole; anything else
  # (an unrealized float tensor, an index into a computed value) is replaced by the masked whole
  idx = [indices] if (isinstance(indices, list) and all(isinstance(i, int) for i in indices)) or not isinstance(indices, (tuple, list)) else list(indices)
  advanced = any(isinstance(i, (Tensor, list, tuple)) for i in idx)
  realized = self.uop.base.op is Ops.BUFFER or _base_buffer_is_realized(self.uop)
  replace = (not self.uop.base.is_realized and self.is_floating_point()) or not (advanced or realized)
  if not replace and not advanced:
    self[indices].assign(v)
    return
  parsed = _parse_indices(self, indices)
  mops = [p for p in parsed if p["index"] is not None]
  x_dims = [p for p in parsed if not p["collapse_dim"]]
  if tops := [(d, p["index"]) for d, p in enumerate(x_dims) if isinstance(p["index"], Tensor)]:
    # advanced setitem: v placed through the indices' one-hot mask in the view's space, then as basic setitem
    x = _apply_view_ops(self, mops).reshape(tuple(p["size"] for p in x_dims))
    g, mask, dims, big_shape, sum_axis, permuted = _tensor_index_mask(x, tops)
    vb = v._broadcast_to(_broadcast_shape(g.shape, v.shape))
    for dim in sum_axis: vb = vb.unsqueeze(dim)
    start = dims[0] if not permuted else 0
    vb = x._masked_merge(vb, mask, tuple(range(start, start + len(big_shape))))
  else: vb = v._broadcast_to(tuple(p["size"] for p in x_dims))
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
  if replace: self.replace(new)
  else: self.assign(new)

def _base_buffer_is_realized(u):
  # the buffer below earlier assigns (AFTER) has memory
  u = u.base
  while u.op is Ops.AFTER: u = u.src[0].base
  return u.is_realized

# ---- the trace's RESULT: json text (non-finite floats as the strings "NaN", "Infinity", "-Infinity") ----
def _jsonable(x):
  if isinstance(x, float) and not math.isfinite(x): return "NaN" if math.isnan(x) else ("Infinity" if x > 0 else "-Infinity")
  if isinstance(x, dict): return {str(k): _jsonable(v) for k, v in x.items()}
  if isinstance(x, (list, tuple)): return [_jsonable(v) for v in x]
  if isinstance(x, Tensor): return _jsonable(x.tolist())
  return x

# ---- the console: what the script printed, kept for the trace's "console" (engine/trace/schema.h) while it still
# goes where it went (the terminal, or the window's console through the child's pipes)
_CONSOLE_CHARS = 1 << 20
_console = {"parts": [], "chars": 0, "cut": False}

class _ConsoleTee:
  def __init__(self, stream, name):
    self._stream, self._name = stream, name
  def write(self, s):
    r = self._stream.write(s)
    if isinstance(s, str) and s: _console_keep(self._name, s)
    return r
  def flush(self):
    return self._stream.flush()
  def __getattr__(self, a):
    return getattr(self._stream, a)

def _console_keep(name, s):
  room = _CONSOLE_CHARS - _console["chars"]
  if len(s) > room: s, _console["cut"] = s[:max(room, 0)], True
  if not s: return
  parts = _console["parts"]
  if parts and parts[-1][0] == name: parts[-1][1].append(s)
  else: parts.append((name, [s]))
  _console["chars"] += len(s)

def _console_start():
  _console.update(parts=[], chars=0, cut=False)
  for name in ("stdout", "stderr"):
    s = getattr(sys, name)
    if s is not None and not isinstance(s, _ConsoleTee): setattr(sys, name, _ConsoleTee(s, name))

def _console_stop(error=""):
  for name in ("stdout", "stderr"):
    s = getattr(sys, name)
    if isinstance(s, _ConsoleTee): setattr(sys, name, s._stream)
  parts = [{"stream": n, "text": "".join(t)} for n, t in _console["parts"]]
  if _console["cut"]:
    parts.append({"stream": "stderr", "text": "\n[the trace keeps the first %d characters of the console]\n" % _CONSOLE_CHARS})
  if error and _CONSOLE_CHARS > _console["chars"]:  # (the trace's "error" keeps it whole)
    parts.append({"stream": "stderr", "text": error[:_CONSOLE_CHARS - _console["chars"]]})
  return json.dumps(parts)

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
                make_tuple=make_tuple, colored=colored, ansistrip=ansistrip, ansilen=ansilen, TRAINING=TRAINING,
                FUSE_OPTIM=FUSE_OPTIM)
_dtype_mod = dict(DType=DType, dtypes=dtypes, to_dtype=to_dtype, least_upper_dtype=least_upper_dtype, strong_dtype=strong_dtype,
                  sum_acc_dtype=sum_acc_dtype, ConstType=(float, int, bool))
_module("tinygrad", Tensor=Tensor, dtypes=dtypes, Variable=Variable, Device=Device, GlobalCounters=GlobalCounters, Context=Context,
        UOp=UOp, Ops=Ops)
_module("tinygrad.tensor", Tensor=Tensor)
_module("tinygrad.dtype", **_dtype_mod)
_module("tinygrad.helpers", **_helpers)
_module("tinygrad.device", Device=Device)
_module("tinygrad.uop", Ops=Ops, GroupOp=GroupOp)
def sym_infer(uop, var_vals):
  # a shape entry's int for these Variables' values (an int stays itself), as the reference's tinygrad.uop.ops.sym_infer
  return uop.sym_infer(var_vals) if isinstance(uop, UOp) else uop
_module("tinygrad.uop.ops", Ops=Ops, UOp=UOp, GroupOp=GroupOp, Variable=Variable, sym_infer=sym_infer)
_module("tinygrad.engine")
_module("tinygrad.engine.realize", run_linear=run_linear, compile_linear=_ts.compile_linear)

# ---- tinygrad.nn: the layers (tinygrad/nn/__init__.py) and nn.state, same graphs as tinygrad ----
def _init_param(fn, *shape, **kwargs):
  # tinygrad's default initializers draw from Tensor.uniform/glorot_uniform; until rand exists here a layer's
  # default weights are an uninitialized buffer (programs assign their weights explicitly)
  try: return fn(*shape, **kwargs)
  except NotImplementedError: return Tensor.empty(*shape)

class BatchNorm:
  def __init__(self, sz, eps=1e-5, affine=True, track_running_stats=True, momentum=0.1):
    self.eps, self.track_running_stats, self.momentum = eps, track_running_stats, momentum
    self.weight = Tensor.ones(sz) if affine else None
    self.bias = Tensor.zeros(sz) if affine else None
    # running statistics are state, not parameters: optimizers leave them alone
    self.num_batches_tracked = Tensor.zeros(dtype=dtypes.int64).is_param_(False)
    if track_running_stats: self.running_mean, self.running_var = Tensor.zeros(sz).is_param_(False), Tensor.ones(sz).is_param_(False)
  def calc_stats(self, x):
    shape_mask = [1, -1, *([1] * (x.ndim - 2))]
    if self.track_running_stats and not TRAINING: return self.running_mean, self.running_var.reshape(shape_mask)
    batch_mean = x.mean(axis=(reduce_axes := tuple(x for x in range(x.ndim) if x != 1)))
    y = (x - batch_mean.detach().reshape(shape_mask))
    batch_var = (y * y).mean(axis=reduce_axes)
    return batch_mean, batch_var
  def __call__(self, x):
    batch_mean, batch_var = self.calc_stats(x)
    if self.track_running_stats and TRAINING:
      self.running_mean.assign((1 - self.momentum) * self.running_mean + self.momentum * batch_mean.detach())
      self.running_var.assign((1 - self.momentum) * self.running_var + self.momentum * x.numel() / (x.numel() - x.shape[1]) * batch_var.detach())
      self.num_batches_tracked += 1
    return x.batchnorm(self.weight, self.bias, batch_mean, batch_var.add(self.eps).rsqrt())
BatchNorm2d = BatchNorm3d = BatchNorm

class Conv2d:
  def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True):
    self.kernel_size = make_tuple(kernel_size, 2)
    if isinstance(padding, str):
      if padding.lower() != 'same': raise ValueError(f"Invalid padding string {padding!r}, only 'same' is supported")
      if stride != 1: raise ValueError("padding='same' is not supported for strided convolutions")
      pad = [(d * (k - 1) // 2, d * (k - 1) - d * (k - 1) // 2) for d, k in zip(make_tuple(dilation, len(self.kernel_size)), self.kernel_size[::-1])]
      padding = tuple(flatten(pad))
    self.stride, self.dilation, self.groups, self.padding = stride, dilation, groups, padding
    scale = 1 / math.sqrt(in_channels * prod(self.kernel_size))
    self.weight = _init_param(Tensor.uniform, out_channels, in_channels // groups, *self.kernel_size, low=-scale, high=scale)
    self.bias = _init_param(Tensor.uniform, out_channels, low=-scale, high=scale) if bias else None
  def __call__(self, x): return x.conv2d(self.weight, self.bias, self.groups, self.stride, self.dilation, self.padding)
def Conv1d(in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True):
  return Conv2d(in_channels, out_channels, (kernel_size,), stride, padding, dilation, groups, bias)

class ConvTranspose2d(Conv2d):
  def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, dilation=1, groups=1, bias=True):
    super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias)
    scale = 1 / math.sqrt(in_channels * prod(self.kernel_size))
    self.weight = _init_param(Tensor.uniform, in_channels, out_channels // groups, *self.kernel_size, low=-scale, high=scale)
    self.output_padding = output_padding
  def __call__(self, x):
    return x.conv_transpose2d(self.weight, self.bias, self.groups, self.stride, self.dilation, self.padding, self.output_padding)

class Linear:
  def __init__(self, in_features, out_features, bias=True):
    bound = 1 / math.sqrt(in_features)
    self.weight = _init_param(Tensor.uniform, out_features, in_features, low=-bound, high=bound)
    self.bias = _init_param(Tensor.uniform, out_features, low=-bound, high=bound) if bias else None
  def __call__(self, x): return x.linear(self.weight.transpose(), self.bias)

class GroupNorm:
  def __init__(self, num_groups, num_channels, eps=1e-5, affine=True):
    self.num_groups, self.num_channels, self.eps = num_groups, num_channels, eps
    self.weight = Tensor.ones(num_channels) if affine else None
    self.bias = Tensor.zeros(num_channels) if affine else None
  def __call__(self, x):
    x = x.reshape(x.shape[0], self.num_groups, -1).layernorm(eps=self.eps).reshape(x.shape)
    if self.weight is None or self.bias is None: return x
    return x * self.weight.reshape(1, -1, *[1] * (x.ndim - 2)) + self.bias.reshape(1, -1, *[1] * (x.ndim - 2))

class InstanceNorm(GroupNorm):  # a GroupNorm with one channel per group: the same graph
  def __init__(self, num_features, eps=1e-5, affine=True):
    super().__init__(num_features, num_features, eps, affine)
    self.num_features = num_features

class LayerNorm:
  def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True):
    self.normalized_shape = make_tuple(normalized_shape, 1)
    self.axis, self.eps = tuple(-1 - i for i in range(len(self.normalized_shape))), eps
    self.weight = Tensor.ones(*self.normalized_shape) if elementwise_affine else None
    self.bias = Tensor.zeros(*self.normalized_shape) if elementwise_affine else None
  def __call__(self, x):
    assert self.normalized_shape == x.shape[-len(self.normalized_shape):], f"last dimensions of {x.shape} must match {self.normalized_shape}"
    x = x.layernorm(eps=self.eps, axis=self.axis)
    if self.weight is None or self.bias is None: return x
    return x * self.weight + self.bias

class LayerNorm2d(LayerNorm):
  def __call__(self, x): return super().__call__(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)

class RMSNorm:
  def __init__(self, dim, eps=1e-6, elementwise_affine=True):
    self.eps = eps
    self.weight = Tensor.ones(dim) if elementwise_affine else None
  def _norm(self, x): return x * (x.square().mean(-1, keepdim=True) + self.eps).rsqrt()
  def __call__(self, x):
    x = self._norm(x.float()).cast(x.dtype)
    return x if self.weight is None else x * self.weight

def _embedding_fwd(weight, idx):
  arange = Tensor.arange(weight.shape[0])
  return (arange == idx.unsqueeze(-1)).unsqueeze(-1).where(weight, 0).sum(-2, dtype=weight.dtype)

class Embedding:
  def __init__(self, vocab_size, embed_size):
    self.weight = _init_param(Tensor.glorot_uniform, vocab_size, embed_size)
  def __call__(self, idx):
    if not dtypes.is_int(idx.dtype): raise TypeError(f"Expected integer dtype for index in embedding, got {idx.dtype}")
    return _embedding_fwd(self.weight, idx)

def get_state_dict(obj, prefix='', tensor_type=Tensor):
  from collections import OrderedDict
  if isinstance(obj, tensor_type): return {prefix.strip('.'): obj}
  if hasattr(obj, '_asdict'): return get_state_dict(obj._asdict(), prefix, tensor_type)
  if isinstance(obj, OrderedDict): return get_state_dict(dict(obj), prefix, tensor_type)
  if hasattr(obj, '__dict__'): return get_state_dict(obj.__dict__, prefix, tensor_type)
  state_dict = {}
  if isinstance(obj, (list, tuple)):
    for i, x in enumerate(obj): state_dict.update(get_state_dict(x, f"{prefix}{str(i)}.", tensor_type))
  elif isinstance(obj, dict):
    for k, v in obj.items(): state_dict.update(get_state_dict(v, f"{prefix}{str(k)}.", tensor_type))
  return state_dict

def get_parameters(obj): return list(get_state_dict(obj).values())

def load_state_dict(model, state_dict, strict=True, verbose=True, consume=False, realize=True):
  ret = []
  model_state_dict = get_state_dict(model)
  if DEBUG >= 1 and len(state_dict) > len(model_state_dict):
    print("WARNING: unused weights in state_dict", sorted(list(state_dict.keys() - model_state_dict.keys())))
  for k, v in model_state_dict.items():
    if k not in state_dict and not strict:
      if DEBUG >= 1: print(f"WARNING: not loading {k}")
      continue
    if v.shape != state_dict[k].shape:
      if {(), (1,)} == {state_dict[k].shape, v.shape}: state_dict[k] = state_dict[k].reshape(v.shape)
      else: raise ValueError(f'Shape mismatch in layer `{k}`: Expected shape {v.shape}, but found {state_dict[k].shape} in state dict.')
    if isinstance(v.device, tuple):
      if isinstance(state_dict[k].device, tuple): v.replace(state_dict[k])
      else: v.replace(state_dict[k].shard(v.device, v.uop.axis))
    else: v.replace(state_dict[k].to(v.device))
    if realize: v.realize()
    if consume: del state_dict[k]
    ret.append(v)
  return ret

_nn_layers = dict(BatchNorm=BatchNorm, BatchNorm2d=BatchNorm2d, BatchNorm3d=BatchNorm3d, Conv1d=Conv1d, Conv2d=Conv2d,
                  ConvTranspose2d=ConvTranspose2d, Linear=Linear, GroupNorm=GroupNorm, InstanceNorm=InstanceNorm,
                  LayerNorm=LayerNorm, LayerNorm2d=LayerNorm2d, RMSNorm=RMSNorm, Embedding=Embedding)
_module("tinygrad.nn", **_nn_layers)
_module("tinygrad.nn.state", get_state_dict=get_state_dict, get_parameters=get_parameters, load_state_dict=load_state_dict)

# ---- tinygrad.nn.optim: the reference's optimizers, as tensor programs over each param and its .grad ----
# An optimizer step is one realize: the new params, and the optimizer's own state (momentum, Adam moments, the
# running powers of beta), are assigned in place.
class Optimizer:
  def __init__(self, params, lr, device=None, fused=None):
    if lr < 0: raise ValueError(f"Invalid learning rate: {lr}")
    self.params = dedup([x for x in params if x.is_param])
    assert len(self.params) != 0, "optimizer must have at least one param"
    self.buffers = dedup([x for x in params if not x.is_param])  # state that is realized with the step, not updated
    self.device = device or self.params[0].device
    self.param_dtype = to_dtype(getenv("OPTIM_DTYPE", "float32"))
    self.fused = bool(FUSE_OPTIM) if fused is None else fused
    # lr lives in a buffer (so a schedule can change it) in at least float32
    self.lr = Tensor(lr if getenv("CONST_LR") else [lr], device=self.device, dtype=least_upper_dtype(dtypes.default_float, dtypes.float32))
    if self.fused:
      self.pos_params = [0]
      for t in self.params: self.pos_params.append(self.pos_params[-1] + t.numel())

  def _new_optim_param(self):
    if self.fused: return [Tensor.zeros(self.pos_params[-1], dtype=self.param_dtype, device=self.device)]
    if isinstance(self.device, tuple): return [Tensor.zeros_like(t, dtype=self.param_dtype) for t in self.params]
    return [Tensor.zeros(t.shape, dtype=self.param_dtype, device=self.device) for t in self.params]

  def zero_grad(self):
    for param in self.params: param.grad = None

  def step(self): Tensor.realize(*self.schedule_step())

  def schedule_step(self):
    if not TRAINING:
      raise RuntimeError(f"TRAINING={TRAINING.value}, TRAINING must be enabled to use the optimizer.\n"
                         "  - help: Consider using Context(TRAINING=1) before calling Optimizer.step().")
    for t in self.params:
      if t.grad is None: raise RuntimeError(f"optimizer step: a param of shape {t.shape} has no .grad; call backward() first")
    if self.fused:
      # one flat buffer for every param: concatenate, step once, split back
      flat_params = [Tensor.cat(*[t.flatten() for t in self.params], dim=0)]
      flat_grads = [Tensor.cat(*[t.grad.contiguous().flatten() for t in self.params], dim=0)]
      out, extra = self._step(flat_params, flat_grads)
      updates = [out[0][self.pos_params[i]:self.pos_params[i + 1]].reshape(t.shape) for i, t in enumerate(self.params)]
    else:
      updates, extra = self._step(self.params, [t.grad for t in self.params])
    for t, up in zip(self.params, updates): t.assign(self._apply_update(t, up))
    return extra + self.params + self.buffers

  def _step(self, params, grads): raise NotImplementedError
  def _apply_update(self, t, up): return t.detach() - up.to(t.device)

class OptimizerGroup(Optimizer):
  def __init__(self, *optimizers):
    self.optimizers = optimizers
    self.params, self.buffers = flatten([o.params for o in optimizers]), flatten([o.buffers for o in optimizers])
  def __getitem__(self, i): return self.optimizers[i]
  def zero_grad(self):
    for o in self.optimizers: o.zero_grad()
  def schedule_step(self): return [x for o in self.optimizers for x in o.schedule_step()]

class LARS(Optimizer):
  # SGD with a layer-wise trust ratio; tcoef=0 is plain SGD (momentum, nesterov, weight decay, classic or popular form)
  def __init__(self, params, lr=0.001, momentum=0.9, weight_decay=1e-4, ns_steps=0, ns_coefficients=None, nesterov=False, classic=True,
               pre_wd=True, tcoef=0.001, device=None, fused=None):
    if momentum < 0: raise ValueError(f"Invalid momentum value: {momentum}")
    super().__init__(params, lr, device, fused)
    self.momentum, self.wd, self.ns_steps, self.ns_coefficients = momentum, weight_decay, ns_steps, ns_coefficients
    self.nesterov, self.classic, self.pre_wd, self.tcoef = nesterov, classic, pre_wd, tcoef
    self.b = self._new_optim_param() if self.momentum else []

  def _step(self, params, grads):
    ret = []
    for i, (t, g) in enumerate(zip(params, grads)):
      if self.tcoef != 0:
        r1 = t.detach().square().sum().sqrt()
        r2 = g.square().sum().sqrt()
        r = (r1 > 0).where((r2 > 0).where(self.tcoef * r1 / (r2 + self.wd * r1), 1.0), 1.0)
      else: r = 1.0
      if self.pre_wd and self.wd > 0: g = g + self.wd * t.detach()
      if self.classic: g = g * r * self.lr
      if self.momentum:
        self.b[i].assign(self.momentum * self.b[i] + g)  # the momentum buffer starts at zero
        g = (g + self.momentum * self.b[i]) if self.nesterov else self.b[i]
      if self.ns_coefficients: g = g.reshape(g.shape[0], -1).newton_schulz(self.ns_steps, self.ns_coefficients).reshape(g.shape)
      if not self.pre_wd and self.wd > 0: t = t.detach() * (1.0 - self.wd * self.lr)
      if not self.classic: g = g * r * self.lr
      ret.append(g.cast(t.dtype))
    return ret, self.b

def SGD(params, lr=0.001, momentum=0.0, weight_decay=0.0, nesterov=False, classic=False, device=None, fused=None):
  return LARS(params, lr, momentum, weight_decay, 0, None, nesterov, classic=classic, pre_wd=True, tcoef=0.0, device=device, fused=fused)

class LAMB(Optimizer):
  # Adam's moments with an optional trust ratio (adam=True: Adam/AdamW)
  def __init__(self, params, lr=0.001, b1=0.9, b2=0.999, eps=1e-6, weight_decay=0.0, adam=False, device=None, fused=None):
    if weight_decay < 0: raise ValueError(f"Invalid weight_decay value: {weight_decay}")
    super().__init__(params, lr, device, fused)
    self.b1, self.b2, self.eps, self.wd, self.adam = b1, b2, eps, weight_decay, adam
    self.b1_t, self.b2_t = (Tensor.ones((1,), dtype=dtypes.float32, device=self.device).is_param_(False) for _ in [b1, b2])
    self.m = self._new_optim_param()
    self.v = self._new_optim_param()

  def _step(self, params, grads):
    ret = []
    self.b1_t *= self.b1
    self.b2_t *= self.b2
    for i, (t, g) in enumerate(zip(params, grads)):
      if g.device != self.m[i].device: g = g.contiguous().to(self.m[i].device)
      self.m[i].assign((self.b1 * self.m[i] + (1.0 - self.b1) * g).cast(self.m[i].dtype))
      self.v[i].assign((self.b2 * self.v[i] + (1.0 - self.b2) * (g * g)).cast(self.v[i].dtype))
      m_hat = self.m[i] / (1.0 - self.b1_t)
      v_hat = self.v[i] / (1.0 - self.b2_t)
      up = (m_hat / (v_hat.sqrt() + self.eps)).shard_like(t) + self.wd * t.detach()
      if not self.adam:
        r1 = t.detach().square().sum().sqrt()
        r2 = up.square().sum().sqrt()
        r = Tensor.where(r1 > 0, Tensor.where(r2 > 0, r1 / r2, 1.0), 1.0)
      else: r = 1.0
      ret.append((self.lr * r * up).cast(t.dtype))
    return ret, [self.b1_t, self.b2_t] + self.m + self.v

def Adam(params, lr=0.001, b1=0.9, b2=0.999, eps=1e-8, device=None, fused=None):
  return LAMB(params, lr, b1, b2, eps, 0.0, adam=True, device=device, fused=fused)
def AdamW(params, lr=0.001, b1=0.9, b2=0.999, eps=1e-8, weight_decay=0.01, device=None, fused=None):
  return LAMB(params, lr, b1, b2, eps, weight_decay, adam=True, device=device, fused=fused)

_module("tinygrad.nn.optim", Optimizer=Optimizer, OptimizerGroup=OptimizerGroup, LARS=LARS, SGD=SGD, LAMB=LAMB, Adam=Adam, AdamW=AdamW)

# ---- numpy, both ways (tinygrad.tensor._fromnp, Tensor.numpy, tinygrad.dtype's numpy/torch maps) ----
def _is_numpy_ndarray(x): return str(type(x)) == "<class 'numpy.ndarray'>"
def _to_np_dtype(dtype):
  import numpy as np
  if dtype in (dtypes.bfloat16, *dtypes.fp8s): return np.float32
  return np.dtype(dtype.fmt).type if dtype.fmt is not None else None
def _from_np_dtype(npdtype):
  import numpy as np
  return DTYPES_DICT[np.dtype(npdtype).name]
@functools.cache
def _to_torch_dtype(dtype):
  import numpy as np, torch
  dtype = strong_dtype(dtype)
  if dtype == dtypes.uint64: return getattr(torch, "uint64", None)
  if dtype == dtypes.bfloat16: return torch.bfloat16
  if dtype in dtypes.fp8s: return torch.uint8
  try: return torch.from_numpy(np.array([], dtype=_to_np_dtype(dtype))).dtype
  except TypeError: return None
@functools.cache
def _from_torch_dtype(torchdtype): return {v: k for k in DTYPES_DICT.values() if (v := _to_torch_dtype(k)) is not None}[torchdtype]

def _tensor_from_numpy(x, device, dtype):
  # a 0-d array is a constant of its dtype; otherwise the array (converted first when a dtype is given, as the
  # reference's astype) is a buffer read at realize, cast on the device to the dtype numpy cannot hold (bf16)
  import numpy as np
  dtype = None if dtype is None else to_dtype(dtype)
  if x.shape == (): return Tensor(x.item(), device=device, dtype=dtype or _from_np_dtype(x.dtype))
  if dtype in dtypes.weaks: raise RuntimeError(f"cannot create storage for weak dtype {dtype}")
  if dtype is not None and (npdt := _to_np_dtype(dtype)) is not None: x = x.astype(npdt)
  src = _from_np_dtype(x.dtype)
  t = Tensor._from_array(np.require(x, requirements="C"), x.shape, src, device)
  return t if dtype is None or dtype is src else t.cast(dtype)

@_install
def numpy(self):
  if self.dtype in dtypes.weaks: return self.cast(strong_dtype(self.dtype)).numpy()
  import numpy as np
  if self.dtype in (dtypes.bfloat16, *dtypes.fp8s): return self.float().numpy()
  if 0 in self.shape: return np.empty(self.shape, dtype=_to_np_dtype(self.dtype))
  return np.frombuffer(self._bytes(), dtype=_to_np_dtype(self.dtype)).reshape(self.shape)

@_install
def data(self):
  # the realized contents as a memoryview of the dtype's format (bf16 as its 16-bit storage), shaped as the tensor
  if self.dtype in dtypes.weaks: return self.cast(strong_dtype(self.dtype)).data()
  if 0 in self.shape: raise ValueError(f"can't get data of a tensor with 0 in shape {self.shape}")
  fmt = self.dtype.fmt or {dtypes.bfloat16: "H"}.get(self.dtype, "B")
  mv = memoryview(self._bytes()).cast(fmt)
  return mv.cast(fmt, self.shape) if self.ndim > 1 else mv

# ---- Tensor methods the reference has that the bound ops lacked ----
@_install
def normalize(self, p=2.0, dim=1, eps=1e-12):
  den = self.ne(0).sum(dim, keepdim=True) if p == 0 else self.abs().pow(p).sum(dim, keepdim=True).pow(1 / p)
  return self / den.maximum(eps)
@_install
def newton_schulz(self, steps, params, eps=1.0e-7):
  assert self.ndim > 1, "NS only works for two or more dims"
  if self.shape[-2] > self.shape[-1]: return self.transpose(-2, -1).newton_schulz(steps, params, eps).transpose(-2, -1)
  G = self / (self.square().sum(axis=(-2, -1), keepdim=True).sqrt() + eps)
  for _ in range(steps):
    G = functools.reduce(lambda a, b: a + b, (p * functools.reduce(lambda x, y: (y @ y.transpose(-2, -1)) @ x, [G] * i, G)
                                               for i, p in enumerate(params)))
  return G
_c_pad_to, _c_clone = Tensor.pad_to, Tensor.clone
@_install
def pad_to(self, shape, *args, value=0.0):
  new = argfix(shape, *args)
  if len(new) != self.ndim: raise ValueError(f"dim mismatch, cannot pad {self.shape} to {new}")
  if any(ns is not None and ns < s for s, ns in zip(self.shape, new)): raise ValueError(f"pad_to: cannot pad {self.shape} to the smaller {new}")
  return self.pad(tuple(None if ns is None else (0, ns - s) for s, ns in zip(self.shape, new)), value=value)
@_install
def clone(self, device=None):
  # a weak python constant becomes a buffer of its strong dtype (a float's clone is float32, as the reference's)
  src = self.cast(_ts._strong_dtype(self.dtype)) if self.dtype in dtypes.weaks else self
  ret = _c_clone(src) if device is None else _c_clone(src).to(device)
  if self.grad is not None: ret.grad = self.grad.clone(device=device)
  return ret.is_param_(self.is_param)
def _tensor_reduce(self):  # pickling: the realized contents, shape, dtype and device
  import numpy as np
  return _tensor_unpickle, (bytes(self.contiguous()._bytes()) if 0 not in self.shape else b"", self.shape, self.dtype.name, self.device)
def _tensor_unpickle(data, shape, dtype, device):
  return Tensor._from_bytes(data, shape, to_dtype(dtype), device) if 0 not in shape else Tensor.empty(*shape, dtype=to_dtype(dtype), device=device)
Tensor.__reduce__ = _tensor_reduce
_tensor_unpickle.__module__, _tensor_unpickle.__qualname__ = "tinygrad.tensor", "_tensor_unpickle"

# ---- tinygrad.dtype: the rest of its public names ----
DTYPES_DICT = {k: v for k, v in vars(dtypes).items() if isinstance(v, DType) and not k.startswith(("default", "void", "weak", "_"))}
INVERSE_DTYPES_DICT = {**{v.name: k for k, v in DTYPES_DICT.items()}, "void": "void", "weakint": "weakint", "weakfloat": "weakfloat"}
dtypes.int8s, dtypes.int16s = (dtypes.uint8, dtypes.int8), (dtypes.uint16, dtypes.int16)
dtypes.int32s, dtypes.int64s = (dtypes.uint32, dtypes.int32), (dtypes.uint64, dtypes.int64)
def _finfo(dtype):
  if not dtypes.is_float(dtype): raise ValueError(f"{dtype} is not a floating point type")
  return {dtypes.float16: (5, 10), dtypes.bfloat16: (8, 7), dtypes.float32: (8, 23), dtypes.float64: (11, 52),
          dtypes.fp8e4m3: (4, 3), dtypes.fp8e5m2: (5, 2), dtypes.fp8e4m3fnuz: (4, 3), dtypes.fp8e5m2fnuz: (5, 2)}[dtype]
dtypes.finfo = staticmethod(_finfo)
DType.min = property(lambda self: dtypes.min(self))
DType.max = property(lambda self: dtypes.max(self))
def weak_dtype(dtype): return dtypes.weakfloat if dtypes.is_float(dtype) else dtypes.weakint if dtypes.is_int(dtype) else dtype
def least_upper_float(dt):
  return dtypes.weakfloat if dt is dtypes.weakint else dt if dtypes.is_float(dt) else least_upper_dtype(dt, dtypes.default_float)
def float_to_fp16(x):
  import struct
  try: return struct.unpack("e", struct.pack("e", float(x)))[0]
  except OverflowError: return math.copysign(math.inf, x)
def float_to_bf16(x):
  import struct
  if not math.isfinite(x): return x
  u = struct.unpack("I", struct.pack("f", x))[0]
  u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
  return struct.unpack("f", struct.pack("I", u))[0]
# fp8 codes <-> floats: the engine's conversions (round to nearest even, finite values past the largest saturate,
# NaN/inf as each format has them, fnuz without -0), so the host and the kernels agree
def float_to_fp8(x, dtype):
  assert dtype in dtypes.fp8s, "Only for fp8s"
  return _ts._float_to_fp8(float(x), dtype)
def fp8_to_float(x, dtype):
  assert dtype in dtypes.fp8s, "Only for fp8s"
  return _ts._fp8_to_float(int(x), dtype)
def _ctypes_truncate(name):
  import ctypes
  c = getattr(ctypes, f"c_{name}")
  return lambda x: c(x).value
truncate = {dtypes.bool: bool, dtypes.float16: float_to_fp16, dtypes.bfloat16: lambda x: float_to_bf16(float(x)),
            **{fp8: (lambda x, dtype=fp8: fp8_to_float(float_to_fp8(x, dtype), dtype)) for fp8 in dtypes.fp8s},
            **{getattr(dtypes, n): _ctypes_truncate(n) for n in ("float", "double", "int8", "int16", "int32", "int64",
                                                                  "uint8", "uint16", "uint32", "uint64")}}
def can_lossless_cast(dt0, dt1):
  if dt0 == dt1 or dt0 == dtypes.bool: return True
  if dt1 == dtypes.weakint: return dt0 in dtypes.ints
  if dt1 == dtypes.double: return dt0 in (dtypes.float, dtypes.half, dtypes.bfloat16, *dtypes.fp8s, dtypes.uint32, dtypes.uint16,
                                          dtypes.uint8, dtypes.int32, dtypes.int16, dtypes.int8)
  if dt1 == dtypes.float: return dt0 in (dtypes.half, dtypes.bfloat16, *dtypes.fp8s, dtypes.uint16, dtypes.uint8, dtypes.int16, dtypes.int8)
  if dt1 == dtypes.half: return dt0 in (*dtypes.fp8s, dtypes.uint8, dtypes.int8)
  if dt1 == dtypes.bfloat16: return dt0 in (dtypes.uint8, dtypes.int8)
  if dt1 in (dtypes.uint64, dtypes.uint32, dtypes.uint16): return dt0 in dtypes.uints and dt0.itemsize <= dt1.itemsize
  if dt1 in (dtypes.int64, dtypes.int32, dtypes.int16): return dt0 in dtypes.ints and dt0.itemsize < dt1.itemsize or (dt0 in dtypes.sints and dt0.itemsize <= dt1.itemsize)
  return False
sys.modules["tinygrad.dtype"].__dict__.update(
  DTYPES_DICT=DTYPES_DICT, INVERSE_DTYPES_DICT=INVERSE_DTYPES_DICT, weak_dtype=weak_dtype, least_upper_float=least_upper_float,
  truncate=truncate, float_to_fp16=float_to_fp16, float_to_bf16=float_to_bf16, can_lossless_cast=can_lossless_cast,
  float_to_fp8=float_to_fp8, fp8_to_float=fp8_to_float,
  _to_np_dtype=_to_np_dtype, _from_np_dtype=_from_np_dtype, _to_torch_dtype=_to_torch_dtype, _from_torch_dtype=_from_torch_dtype,
  DTypeLike=(str, DType), ImageDType=type("ImageDType", (), {}))
sys.modules["tinygrad.tensor"].__dict__.update(_to_np_dtype=_to_np_dtype, _from_np_dtype=_from_np_dtype,
                                               is_numpy_ndarray=_is_numpy_ndarray, _tensor_unpickle=_tensor_unpickle)

# ---- tinygrad.helpers: the rest of its public names ----
import typing, tempfile, dataclasses, re
T = typing.TypeVar("T")
def all_same(items): return all(x == items[0] for x in items)
def temp(x, append_user=False):
  import getpass, pathlib
  return (pathlib.Path(tempfile.gettempdir()) / (f"{x}.{getpass.getuser()}" if append_user else x)).as_posix()
def mv_address(mv):
  import ctypes
  return ctypes.addressof(ctypes.c_char.from_buffer(mv))
def unwrap(x):
  assert x is not None
  return x
def fully_flatten(l):
  if hasattr(l, "__len__") and hasattr(l, "__getitem__") and not isinstance(l, str):
    if hasattr(l, "shape") and l.shape == (): return [l[()]]
    return [x for li in l for x in fully_flatten(li)]
  return [l]
def partition(itr, fxn):
  ret = ([], [])
  for s in itr: ret[0 if fxn(s) else 1].append(s)
  return ret
def merge_dicts_(ds): return merge_dicts(ds)
def pluralize(st, cnt): return f"{cnt} {st}" + ('' if cnt == 1 else 's')
def to_function_name(s):
  import string
  return ''.join([c if c in (string.ascii_letters + string.digits + '_') else f'{ord(c):02X}' for c in ansistrip(s)])
def _tolist(self, obj=None):
  assert isinstance(self.value, str)
  return [getattr(obj, x) if obj else x for x in self.value.split(',') if x]
ContextVar.tolist = _tolist

@dataclasses.dataclass(frozen=True)
class Target:
  device: str = ""
  renderer: str = ""
  arch: str = ""
  interface: str = ""
  indices: str = ""
  @staticmethod
  def parse(s):
    if len(split := s.split('+')) == 2:
      (iface, indices), s = ((p[0], p[1]) if len(p := split[0].rsplit(":", 1)) == 2 else (split[0], "")), split[1]
    elif len(split) > 2: raise RuntimeError(f"too many '+' in target string: {s!r}")
    else: iface, indices = "", ""
    parts = [x.upper() if i < 2 else x for i, x in enumerate(s.split(':'))]
    if len(parts) > 3: raise RuntimeError(f"too many ':' in target string: {s!r}")
    return Target(*(parts + [""] * (3 - len(parts))), interface=iface, indices=indices)
  def __repr__(self):
    fst, snd = re.sub(":*$", "", ":".join([self.interface, self.indices])), re.sub(":*$", "", ":".join([self.device, self.renderer, self.arch]))
    return (fst + "+" if fst else "") + snd
  def replacedefault(self, **kwargs): return dataclasses.replace(self, **{k: v for k, v in kwargs.items() if not getattr(self, k)})

class _DEV(ContextVar):
  # DEV as the reference parses it ("CPU", "CPU:LLVM", "VULKAN"): DEV.device, DEV.renderer, DEV.interface
  def __init__(self, key, default_value):
    ContextVar._cache[key] = self
    self.key, self._value = key, [Target.parse(t) for t in (os.getenv(key) or default_value).split(';')]
  @property
  def value(self): return self._value
  @value.setter
  def value(self, v):
    self._value = v if isinstance(v, list) else [v] if isinstance(v, Target) else [Target.parse(t) for t in v.split(';')]
  def __repr__(self): return ";".join(repr(t) for t in self._value)
  def __getattr__(self, k):
    if k.startswith("_"): raise AttributeError(k)
    return getattr(self._value[0], k)
  def target(self, dev, **kwargs):
    return dataclasses.replace(next((t for t in self._value if not t.device or t.device == dev), Target(device=dev)).replacedefault(**kwargs), device=dev)
DEV = _DEV("DEV", "")

# the ContextVars the reference defines (the tests set several through Context); values read from the environment
for _k, _v in dict(BEAM=0, NOOPT=0, IMAGE=0, FLOAT16=0, OPENPILOT_HACKS=0, JIT=1, JIT_BATCH_SIZE=32, WINO=0, CAPTURING=1, TRACEMETA=1,
                   NO_COLOR=0, TC=1, TC_SELECT=-1, TC_OPT=0, TRANSCENDENTAL=1, NOLOCALS=0, SPLIT_REDUCEOP=1, NO_MEMORY_PLANNER=0,
                   LRU=1, RING=1, ALL2ALL=0, ALLREDUCE_CAST=1, CACHELEVEL=2, IGNORE_BEAM_CACHE=0, VALIDATE_WITH_CPU=0,
                   DISABLE_FAST_IDIV=1, ALLOW_DEVICE_USAGE=1, MAX_BUFFER_SIZE=0, MAX_KERNEL_BUFFERS=0, EMULATED_DTYPES="",
                   DEFAULT_FLOAT="float32", DEFAULT_INT="int32", CAPTURE_PROCESS_REPLAY=0, PROFILE=0, SPEC=1, CHECK_OOB=0,
                   PCONTIG=0, DEBUG_RANGEIFY=0, TUPLE_ORDER=1, CCACHE=1, ALLOW_TF32=0, SCACHE=1, USE_ATOMICS=0,
                   DISALLOW_BROADCAST=0, TRACK_MATCH_STATS=0, PARALLEL=0, NUM_CPU_THREADS=os.cpu_count() or 1).items():
  if _k not in ContextVar._cache: ContextVar(_k, _v)
# the reference's tinygrad.helpers.Timing: a context (or decorator) that prints how long its body took
class Timing(contextlib.ContextDecorator):
  def __init__(self, prefix="", on_exit=None, enabled=True): self.prefix, self.on_exit, self.enabled = prefix, on_exit, enabled
  def __enter__(self): self.st = _time.perf_counter_ns()
  def __exit__(self, *exc):
    self.et = _time.perf_counter_ns() - self.st
    if self.enabled: print(f"{self.prefix}{self.et*1e-6:6.2f} ms" + (self.on_exit(self.et) if self.on_exit else ""))
_helper_vars = {k: ContextVar._cache[k] for k in ContextVar._cache}
_helper_vars.update(USE_TC=ContextVar._cache["TC"])
sys.modules["tinygrad.helpers"].__dict__.update(
  _helper_vars, Timing=Timing, DEV=DEV, Target=Target, T=T, all_same=all_same, temp=temp, mv_address=mv_address, unwrap=unwrap,
  fully_flatten=fully_flatten, partition=partition, merge_dicts=merge_dicts, pluralize=pluralize, polyN=polyN,
  to_function_name=to_function_name, getenv=getenv, CI=os.getenv("CI", "") != "", OSX=sys.platform == "darwin",
  WIN=sys.platform == "win32")

# ---- Device: Device[name] is the device object tinygrad's tests read (its renderer's dtypes, synchronize) ----
class _Renderer:
  def __init__(self, device): self.device = device
  def supported_dtypes(self):
    names = set(_ts._device_dtypes(self.device))
    return {d for d in dtypes.all if not names or d.name in names or INVERSE_DTYPES_DICT.get(d.name) in names}
  def __repr__(self): return f"<renderer of {self.device}>"
class _Compiled:
  def __init__(self, device):
    self.device, self.renderer = device, _Renderer(device)
  @property
  def graph(self):
    # the class of its graph handler (tinygrad.engine.jit's GraphRunner kinds), None when it has none
    name = _ts._device_graph(self.device)
    return None if name is None else _graph_runner_class(name)
  def synchronize(self): pass  # every call has finished when it returns
  def __repr__(self): return f"<device {self.device}>"
class _DeviceMeta(type):
  _opened = {}
  def __getitem__(cls, ix):
    d = cls.canonicalize(ix)
    if d not in _DeviceMeta._opened:
      _ts._check_device(d)
      _DeviceMeta._opened[d] = _Compiled(d)
    return _DeviceMeta._opened[d]
  def get_available_devices(cls): return iter(_ts._device_names())
  @property
  def _devices(cls): return list(_ts._device_names())
Device = _DeviceMeta("Device", (), {k: v for k, v in vars(Device).items() if k not in ("__dict__", "__weakref__")})
for _m in ("tinygrad", "tinygrad.device"): sys.modules[_m].Device = Device

# ---- tinygrad.uop.ops.KernelInfo (a kernel's name and opts as the reference's SINK carries them) ----
@dataclasses.dataclass(frozen=True)
class KernelInfo:
  name: str = "test"
  axis_types: tuple = ()
  dont_use_locals: bool = False
  applied_opts: tuple = ()
  opts_to_apply: typing.Optional[tuple] = None
  estimates: typing.Any = None
  beam: int = 0
  @property
  def function_name(self): return to_function_name(self.name)
sys.modules["tinygrad.uop.ops"].KernelInfo = KernelInfo
# the kinds of a RANGE, in the reference's order (the engine's AxisType)
AxisType = enum.Enum("AxisType", "DEVICE GLOBAL WARP LOCAL WEAK GROUP_REDUCE REDUCE UPCAST UNROLL THREAD PLACEHOLDER LOOP", module="tinygrad.uop.ops")
AxisType.__repr__ = lambda self: str(self)
sys.modules["tinygrad.uop.ops"].AxisType = AxisType

# ---- TinyJit (the reference's engine/jit.py): the first call runs, the second captures the schedules its realizes
# make (without running them), later calls replay those calls with the new input buffers and Variable values ----
JitError = _ts.JitError
def _check_no_non_tensor_return(ret):
  if ret is None or isinstance(ret, Tensor): return
  if isinstance(ret, (tuple, list, dict)):
    for item in (ret.values() if isinstance(ret, dict) else ret): _check_no_non_tensor_return(item)
    return
  raise JitError(f"JIT return contains non-Tensor value of type {type(ret).__name__}")

class CapturedJit:
  # linear: the captured calls (a LINEAR of CALLs), reading placeholders where the capture's inputs were
  def __init__(self, ret, linear, placeholders, expected_names, expected_input_info):
    self.ret, self.linear, self._placeholders = ret, linear, placeholders
    self.expected_names, self.expected_input_info = expected_names, expected_input_info
  def __call__(self, input_buffers, var_vals):
    if DEBUG >= 1 and len(self.linear.src) >= 10: print(f"jit execs {len(self.linear.src)} calls")
    _ts.jit_replay(self.linear, self._placeholders, input_buffers, var_vals)
    return self.ret
  def free_intermediates(self): _ts.jit_free_intermediates(self.linear, self._placeholders)

def _prepare_jit_inputs(args, kwargs):
  input_tensors = [(name, t) for name, t in list(enumerate(args)) + sorted(kwargs.items()) if t.__class__ is Tensor]
  names, tensors = [name for name, _ in input_tensors], [t for _, t in input_tensors]
  # tensors in containers (shallow, not recursive: a model's weights are not inputs)
  for x in args + tuple(kwargs.values()):
    it = x if isinstance(x, (tuple, list)) else x.values() if isinstance(x, dict) else []
    tensors += [t for t in it if t.__class__ is Tensor and not any(t is y for y in tensors)]
  if any(t.device is None for t in tensors): raise JitError("JIT inputs must be real buffers; use .clone()")
  infos = [_ts.jit_input(t) for t in tensors]
  if len(unrealized := [t for t, info in zip(tensors, infos) if info is None]):
    Tensor.realize(*unrealized)
    infos = [_ts.jit_input(t) if info is None else info for t, info in zip(tensors, infos)]
  # (a buffer with no memory yet, a Tensor.empty nothing wrote, is no input: the calls use the capture's own, as the reference's)
  input_buffers = [b for bufs, _, _ in infos for b in bufs if b.is_realized]
  if len({b.id for b in input_buffers}) != len(input_buffers): raise JitError("duplicate inputs to JIT")
  var_vals = {}
  for v in args + tuple(kwargs.values()):
    if isinstance(v, UOp) and v.op is Ops.AFTER:
      var, val = v.unbind()
      var_vals[var.expr] = val
  for _, _, bound in infos: var_vals.update(bound)  # the Variables an input's view is bound to (a[:, :vi])
  expected_input_info = [(view, t.dtype, t.device) for t, (_, view, _) in zip(tensors, infos)]
  return input_buffers, var_vals, names, expected_input_info

class _TinyJit:
  def __init__(self, fxn, captured=None, prune=False):
    assert fxn or captured, "need either a function or a CapturedJit"
    self.fxn, self.captured, self.prune = fxn, captured, prune
    self.cnt = 2 if self.fxn is None else 0
  def reset(self):
    assert self.fxn is not None, "can't reset without function"
    self.cnt, self.captured = 0, None
  def __get__(self, obj, objtype): return functools.partial(self.__call__, obj)  # instance methods
  def _run(self, args, kwargs):
    ret = self.fxn(*args, **kwargs)
    if len(params := get_state_dict(ret, tensor_type=Tensor)): Tensor.realize(*params.values())
    return ret
  def __call__(self, *args, **kwargs):
    input_buffers, var_vals, names, expected_input_info = _prepare_jit_inputs(args, kwargs)
    if not _helper_vars["JIT"] or self.cnt == 0:
      with Context(BEAM=0 if getenv("IGNORE_JIT_FIRST_BEAM") else _helper_vars["BEAM"].value):
        ret = self._run(args, kwargs)
    elif self.cnt == 1:
      _ts.jit_begin_capture()
      try: ret = self._run(args, kwargs)
      except BaseException:
        _ts.jit_end_capture([])
        raise
      linear, placeholders, linears = _ts.jit_end_capture(input_buffers)
      if not len(linear.src): raise JitError("didn't JIT anything!")
      _check_no_non_tensor_return(ret)
      if DEBUG >= 1: print(f"JIT captured {linears} linears with {len(input_buffers)} inputs")
      if self.prune:
        linear, onetime = _ts.jit_prune(linear, placeholders)
        if DEBUG >= 1: print(f"pruned from {len(linear.src) + len(onetime.src)} -> {len(linear.src)} kernels")
        _ts.jit_replay(onetime, placeholders, input_buffers, var_vals)
      # compiled once for every replay, with BEAM=JITBEAM if set, and batched into graph calls (not with JIT=2)
      with Context(BEAM=getenv("JITBEAM", _helper_vars["BEAM"].value)):
        linear = _ts.jit_compile(linear, -1 if _helper_vars["JIT"].value >= 2 else _helper_vars["JIT_BATCH_SIZE"].value,
                                 bool(getenv("GRAPH_ONE_KERNEL")))
      self.captured = CapturedJit(ret, linear, placeholders, names, expected_input_info)
      ret = self.captured(input_buffers, var_vals)
    else:
      if self.captured.expected_names != names: raise JitError(f"args mismatch in JIT: {self.captured.expected_names=} != {names}")
      if self.captured.expected_input_info != expected_input_info:
        raise JitError(f"args mismatch in JIT: {self.captured.expected_input_info=} != {expected_input_info=}")
      ret = self.captured(input_buffers, var_vals)
    self.cnt += 1
    return ret
def TinyJit(fxn=None, **kwargs): return (lambda f: _TinyJit(f, **kwargs)) if fxn is None else _TinyJit(fxn, **kwargs)

# The graph handlers' classes, as the reference names their kinds: a GraphRunner batches kernels of one device (the
# engine's graph calls, made at capture: a CALL of CUSTOM_FUNCTION(LINEAR(calls), arg="graph")); a MultiGraphRunner
# would batch kernels and copies of several devices of one kind (no device here has one). The engine builds and runs
# them; supports_uop answers as the reference's split asks.
def _call_devices(batch_devs, new_call):
  out = list(batch_devs)
  for b in new_call.src[1:]:
    for x in (b.device if isinstance(b.device, tuple) else (b.device,)):
      if (d := Device[x]) not in out: out.append(d)
  return out
class GraphRunner:
  def __init__(self, *args, **kwargs):
    raise NotImplementedError("graph calls are built by the engine when TinyJit captures (see CapturedJit.linear), not from Python")
  @staticmethod
  def supports_uop(batch_devs, new_call) -> bool:
    return new_call.src[0].op in (Ops.SINK, Ops.PROGRAM) and len(_call_devices(batch_devs, new_call)) == 1
class MultiGraphRunner(GraphRunner):
  @staticmethod
  def supports_uop(batch_devs, new_call) -> bool:
    return new_call.src[0].op in (Ops.SINK, Ops.PROGRAM, Ops.COPY) and len({type(d) for d in _call_devices(batch_devs, new_call)}) == 1
@functools.lru_cache(None)
def _graph_runner_class(name): return type(name, (GraphRunner,), {"__module__": "tinygrad.engine.jit"})
def graph_class(dev): return dev.graph
_module("tinygrad.engine.jit", TinyJit=TinyJit, JitError=JitError, CapturedJit=CapturedJit, graph_class=graph_class, GraphRunner=GraphRunner,
        MultiGraphRunner=MultiGraphRunner)
sys.modules["tinygrad"].TinyJit = TinyJit

# ---- tinygrad.nn: ConvTranspose1d, LSTMCell; tinygrad.nn.optim.Muon ----
def ConvTranspose1d(in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, dilation=1, groups=1, bias=True):
  return ConvTranspose2d(in_channels, out_channels, (kernel_size,), stride, padding, output_padding, dilation, groups, bias)
class LSTMCell:
  def __init__(self, input_size, hidden_size, bias=True):
    stdv = 1.0 / math.sqrt(hidden_size)
    self.weight_ih = Tensor.uniform(hidden_size * 4, input_size, low=-stdv, high=stdv)
    self.weight_hh = Tensor.uniform(hidden_size * 4, hidden_size, low=-stdv, high=stdv)
    self.bias_ih = Tensor.zeros(hidden_size * 4) if bias else None
    self.bias_hh = Tensor.zeros(hidden_size * 4) if bias else None
  def __call__(self, x, hc=None):
    if hc is None: hc = (Tensor.zeros(x.size(0), self.weight_hh.size(1), dtype=x.dtype, buffer=False),) * 2
    gates = x.linear(self.weight_ih.T, self.bias_ih) + hc[0].linear(self.weight_hh.T, self.bias_hh)
    i, f, g, o = gates.chunk(4, dim=1)
    i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
    new_c = f * hc[1] + i * g
    return o * new_c.tanh(), new_c
sys.modules["tinygrad.nn"].__dict__.update(ConvTranspose1d=ConvTranspose1d, LSTMCell=LSTMCell)
def Muon(params, lr=0.001, momentum=0.95, weight_decay=0.1, ns_steps=5, ns_coefficients=(3.4445, -4.775, 2.0315), nesterov=True,
         device=None, fused=None):
  fused = bool(FUSE_OPTIM) if fused is None else fused
  assert not fused, "FUSE_OPTIM not allowed for Muon optimizer"
  return LARS(params, lr, momentum, weight_decay, ns_steps, ns_coefficients, nesterov, classic=False, pre_wd=False, tcoef=0.0,
              device=device, fused=fused)
sys.modules["tinygrad.nn.optim"].Muon = Muon

# ---- creation and movement entries with the reference's signatures ----
_c_zeros, _c_ones, _c_stack, _c_unfold = Tensor.zeros, Tensor.ones, Tensor.stack, Tensor.unfold
def _zeros(*shape, buffer=True, **kwargs): return _c_zeros(*shape, **kwargs) if buffer else Tensor.full(argfix(*shape), 0.0, buffer=False, **kwargs)
def _ones(*shape, buffer=True, **kwargs): return _c_ones(*shape, **kwargs) if buffer else Tensor.full(argfix(*shape), 1.0, buffer=False, **kwargs)
Tensor.zeros, Tensor.ones = staticmethod(_zeros), staticmethod(_ones)
def _stack(self, *args, dim=0):
  # Tensor.stack(a, b), a.stack(b) and Tensor.stack((a, b)): the tensors as argfix reads them
  tensors = argfix(self, *args)
  return _c_stack(tensors[0], *tensors[1:], dim=dim)
Tensor.stack = _stack
@_install
def unfold(self, dim, size, step):
  if size < 0: raise RuntimeError(f'size must be >= 0 but got {size=}')
  if step <= 0: raise RuntimeError(f'step must be > 0 but got {step=}')
  dim = self._resolve_dim(dim)
  if size > self.shape[dim]: raise RuntimeError(f'maximum size for tensor at dimension {dim} is {self.shape[dim]} but size is {size}')
  if size == 0:  # empty windows: (s - 0) // step + 1 of them, each of no elements
    n = self.shape[dim] // step + 1
    x = self.transpose(dim, -1)[..., :0]
    return x.reshape(*x.shape[:-1], 1, 0).expand(*x.shape[:-1], n, 0).transpose(dim, -2)
  return _c_unfold(self, dim, size, step)

# ---- gradient: the reference's checks before the engine's pass ----
_c_gradient = Tensor.gradient
@_install
def gradient(self, *targets, gradient=None):
  assert gradient is not None or self.shape == (), "when no gradient is provided, backward must be called on a scalar tensor"
  if gradient is not None and gradient.shape != self.shape and gradient.numel() == self.numel(): gradient = gradient.reshape(self.shape)
  return _c_gradient(self, *targets, gradient=gradient)
