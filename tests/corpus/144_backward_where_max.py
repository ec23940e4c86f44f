# gradients of maximum (ties split), where, clip, abs and relu-like masks
from tinygrad import Tensor
a = Tensor([1.0, -2.0, 3.0, 0.5]).realize()
b = Tensor([1.0, 2.0, -3.0, 0.25]).realize()
out = {}
ga, gb = a.maximum(b).sum().gradient(a, b)
out["maximum"] = [ga.tolist(), gb.tolist()]
ga, gb = (a > 0).where(a * 2, b * 3).sum().gradient(a, b)
out["where"] = [ga.tolist(), gb.tolist()]
out["clip"] = a.clip(-1, 2).sum().gradient(a)[0].tolist()
out["abs"] = (a.abs() * b).sum().gradient(a)[0].tolist()
RESULT = out
print(RESULT)
