# argmax along an axis (2 kernels) and flat (1 kernel)
from tinygrad import Tensor
x = Tensor([[1.0, 5.0, 3.0, 5.0], [7.0, 2.0, 9.0, 0.0], [-1.0, -2.0, -3.0, -0.5]]).realize()
a1 = x.argmax(axis=1)
a0 = x.argmax()
RESULT = {"axis1": a1.tolist(), "flat": a0.item()}
print(RESULT)
