# gradients of the unary ops: exp, log, sqrt, sin, cos, reciprocal, sigmoid, tanh, exp2/log2 and a cast
from tinygrad import Tensor, dtypes
x = Tensor([0.5, 1.0, 2.0, 3.0]).realize()
out = {}
for name, f in [("exp", lambda t: t.exp()), ("log", lambda t: t.log()), ("sqrt", lambda t: t.sqrt()), ("sin", lambda t: t.sin()),
                ("cos", lambda t: t.cos()), ("recip", lambda t: t.reciprocal()), ("sigmoid", lambda t: t.sigmoid()),
                ("tanh", lambda t: t.tanh()), ("exp2log2", lambda t: t.exp2() * t.log2()), ("cast", lambda t: t.cast(dtypes.half).float() * 3)]:
  gx, = f(x).sum().gradient(x)
  out[name] = gx.tolist()
RESULT = out
print(RESULT)
