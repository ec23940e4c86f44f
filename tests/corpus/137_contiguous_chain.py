# contiguous between movement ops and a transpose of a contiguous copy
from tinygrad import Tensor
x = Tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]).realize()
y = x.T.contiguous().reshape(3, 2) * 2
z = y.T.contiguous() + 1
RESULT = {"y": y.tolist(), "z": z.tolist()}
print(RESULT)
