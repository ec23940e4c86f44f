# Lesson 2: building a graph runs nothing; reading a value realizes it
from tinygrad import Tensor
a = Tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
b = (a * 2 + 1).relu()          # three operations, nothing computed yet
c = b - 3
print(c.tolist())               # the read: one realize, the whole chain fused
