# in-place updates of a realized buffer: assign, +=, *=
from tinygrad import Tensor
t = Tensor([1.0, 2.0, 3.0]).realize()
t += 1
t *= 2
t.realize()
u = Tensor.zeros(3).contiguous().realize()
u.assign(t - 1).realize()
RESULT = {"t": t.tolist(), "u": u.tolist()}
print(RESULT)
