# softmax along the last axis: a max-reduce, an exp-sum reduce and the normalizing kernel (3 kernels)
from tinygrad import Tensor
t = Tensor([[1.0, 2.0, 3.0, 4.0], [1.0, 1.0, 1.0, 1.0], [-1.0, 0.0, 1.0, 100.0]])
print(t.softmax(axis=-1).tolist())
