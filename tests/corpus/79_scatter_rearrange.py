# scatter (plain, add), scatter_reduce (sum/amax, include_self), rearrange, max_unpool2d, masked_select, nonzero
from tinygrad import Tensor
x = Tensor.zeros(3, 4).contiguous().realize()
idx = Tensor([[0, 1, 2, 0], [2, 0, 1, 1]])
src = Tensor([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]])
t = Tensor([[float(i * 3 + j) for j in range(3)] for i in range(2)])
p = Tensor([[[[1.0, 5.0, 2.0, 0.0], [3.0, 4.0, 8.0, 1.0], [0.0, 2.0, 3.0, 9.0], [6.0, 1.0, 4.0, 2.0]]]])
pooled = Tensor([[[[5.0, 8.0], [6.0, 9.0]]]])
pidx = Tensor([[[[1, 6], [12, 11]]]])
RESULT = {"scatter": x.scatter(0, idx, src).tolist(), "scatter_add": x.scatter(0, idx, 1.0, reduce="add").tolist(),
          "sr_sum": x.scatter_reduce(0, idx, src, "sum", include_self=False).tolist(),
          "sr_amax": (x + 2).scatter_reduce(0, idx, src, "amax").tolist(),
          "rearrange": t.rearrange("a b -> b a").tolist(), "rearrange2": t.rearrange("a (b c) -> (a c) b", c=1).tolist(),
          "unpool": pooled.max_unpool2d(pidx).tolist(), "masked_select": t.masked_select(t > 2).tolist(),
          "nonzero": (t - 2).nonzero().tolist()}
print(RESULT)
