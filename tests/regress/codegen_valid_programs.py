# Programs that were rejected ("linearize: no valid order"; empty_shapes.py has the first two): reductions over
# one range in different loop nests
from tinygrad import Tensor, dtypes
x = Tensor([[1.0, 3.0, 2.0], [4.0, -1.0, 0.5]])
print(x.cumsum(1).argmax(1).tolist(), x.cumsum(0).max(0).tolist(), (x.cumsum(1) - x.cumsum(1).max(1, keepdim=True)).tolist())
# a reduce that does not use the outer output axis (an expanded, realized input): its accumulator lives inside
# loops it does not depend on
t = Tensor(list(range(40)), dtype=dtypes.int8).reshape(2, 5, 4)
print(t.unsqueeze(0).expand(3, 2, 5, 4).realize().prod(axis=(1, 3), keepdim=True).tolist())
