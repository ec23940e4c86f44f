# Lesson 5: the LINEAR orders the calls by what they read
from tinygrad import Tensor
a = Tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
b = a.sum(axis=0)            # a reduce over the rows
c = (a / b).max(axis=1)      # reads b: b must be complete first
print(c.tolist())
