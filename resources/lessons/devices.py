# Lesson 8: one program, any device: DEV picks the device, the kernels follow its renderer
from tinygrad import Tensor
x = Tensor([[0.5, -1.0, 2.0], [3.0, 0.25, -0.5]])
print((x.exp() * 2).sum(axis=0).tolist())
