# lshift/rshift as SHL/SHR ALU ops, binary ops with reverse=True, gelu(approximate="none") through erf
from tinygrad import Tensor, dtypes
u = Tensor([1, 3, 31, 64], dtype=dtypes.uint8).realize()
i = Tensor([8, 9, 10, 7]).realize()
f = Tensor([-1.5, 0.25, 0.5, 2.0]).realize()
sh = (u.lshift(2), u.rshift(1), i << 3, i >> 2, i.lshift(Tensor([1, 2, 3, 4]), reverse=True), Tensor([2, 0, 5, 1]).rshift(Tensor([64, 7, 100, 9]), reverse=True))
rev = (f.sub(10, reverse=True), f.div(3, reverse=True), i.mod(50, reverse=True), f.pow(2, reverse=True), i.bitwise_xor(5, reverse=True))
g = f.gelu(approximate="none")
RESULT = {"shift": [t.tolist() for t in sh], "reverse": [t.tolist() for t in rev], "gelu": g.tolist()}
print(RESULT)
