# pad with mode reflect, replicate and circular (2-D, negative pads) and their gradients; expand with None keeps a dim
from tinygrad import Tensor
x = Tensor([[1.0, -2.0, 3.0, 0.5], [0.5, 4.0, -1.0, 2.0], [3.0, 0.0, 1.0, -1.0]])
w = Tensor([[float((i * 7 + j) % 5) for j in range(6)] for i in range(5)])
out = {}
for m in ["reflect", "replicate", "circular"]:
  y = x.pad(((1, 1), (2, 0)), mode=m)
  out[m] = y.tolist()
  out[m + "_grad"] = (y * w[:, :6]).sum().gradient(x)[0].tolist()
out["neg"] = x.pad((-1, 2), mode="replicate").tolist()
out["expand_none"] = x[:, :1].expand(None, 3).tolist()
RESULT = out
print(RESULT)
