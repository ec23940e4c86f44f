# detach stops the gradient, contiguous_backward only changes the backward graph; pow with tensor and const exponents
from tinygrad import Tensor
x = Tensor([1.0, 2.0, 3.0])
e = Tensor([2.0, 0.5, -1.0])
y = (x * x.detach()).sum() + (x.contiguous_backward() * 3).sum()
gx, = y.gradient(x)
z = (x ** e).sum() + (x ** 3).sum()
gx2, ge = z.gradient(x, e)
RESULT = {"detach": gx.tolist(), "pow_x": gx2.tolist(), "pow_e": ge.tolist()}
print(RESULT)
