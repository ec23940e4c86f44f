# Lesson 4: softmax splits into kernels where a reduce must finish before its result is used
from tinygrad import Tensor
t = Tensor([[1.0, 2.0, 3.0, 4.0], [1.0, 1.0, 1.0, 1.0], [-1.0, 0.0, 1.0, 100.0]])
print(t.softmax(axis=-1).tolist())
