# gradients through movement ops: reshape, permute, pad, shrink, flip, expand and slicing
from tinygrad import Tensor
x = Tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]).realize()
w = Tensor.arange(12).reshape(3, 4).float().realize()
out = {}
out["reshape_permute"] = (x.reshape(3, 2).permute(1, 0) * Tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])).sum().gradient(x)[0].tolist()
out["pad"] = (x.pad(((1, 0), (0, 1))) * w).sum().gradient(x)[0].tolist()
out["shrink_flip"] = (x[:, 1:].flip(1) * Tensor([[1.0, 10.0], [100.0, 1000.0]])).sum().gradient(x)[0].tolist()
out["expand"] = (x.reshape(2, 1, 3).expand(2, 4, 3) * w.reshape(1, 4, 3)).sum().gradient(x)[0].tolist()
RESULT = out
print(RESULT)
