# gradients through reductions: sum over an axis, max (with ties), mean, prod (with a zero) and min
from tinygrad import Tensor
x = Tensor([[1.0, 3.0, 3.0], [2.0, -1.0, 0.5]]).realize()
out = {}
out["sum_axis"] = (x.sum(axis=1) * Tensor([1.0, 2.0])).sum().gradient(x)[0].tolist()
out["max"] = x.max().gradient(x)[0].tolist()
out["max_axis"] = x.max(axis=0).sum().gradient(x)[0].tolist()
out["mean"] = x.mean().gradient(x)[0].tolist()
out["min_axis"] = x.min(axis=1, keepdim=True).sum().gradient(x)[0].tolist()
z = Tensor([[1.0, 2.0, 0.0], [2.0, 3.0, 4.0]]).realize()
out["prod"] = z.prod(axis=1).sum().gradient(z)[0].tolist()
RESULT = out
print(RESULT)
