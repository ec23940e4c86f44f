# Lesson 3: each realize is one schedule; a tensor realized once is not computed again
from tinygrad import Tensor
x = Tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])
y = (x * x).realize()           # realize 1: y is stored
z = (y + 1).sum()
print(z.item())                 # realize 2: z, reading y's buffer
print(y.tolist())               # y is already a buffer: no kernel
