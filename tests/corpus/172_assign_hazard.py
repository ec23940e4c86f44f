# assigns that read their own target: transposed and flipped self-assigns, two sliced assigns to one buffer in one realize
from tinygrad import Tensor
a = Tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]).realize()
a.assign(a.T + 1).realize()
b = Tensor([1.0, 2.0, 3.0, 4.0]).realize()
b.assign(b.flip(0) * 2).realize()
c = Tensor([1, 10]).realize()
c.assign((c[0:1] + 1).cat(c[1:2] + 2))
c.assign((c[0:1] * 3).cat(c[1:2] - 1))
d = c + 0
RESULT = {"a": a.tolist(), "b": b.tolist(), "d": d.tolist()}
print(RESULT)
