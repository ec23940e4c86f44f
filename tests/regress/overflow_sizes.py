# sizes past what int64 counts or memory addresses raise OverflowError, as in the reference (once a heap overflow
# and a silent 0.0)
from tinygrad import Tensor
for name, f in [("expand(2**62) realize", lambda: Tensor.ones(1).expand(2**62).contiguous().realize()),
                ("ones(2**32, 2**32).sum()", lambda: Tensor.ones(1 << 32, 1 << 32).sum().item())]:
  try:
    f()
    print(name, "no error")
  except OverflowError:
    print(name, "OverflowError")
