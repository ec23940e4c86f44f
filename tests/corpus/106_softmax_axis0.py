# softmax over axis 0 of a 4x3
from tinygrad import Tensor
x = Tensor([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0], [2.0, -1.0, 1.0], [4.0, 4.0, -4.0]]).realize()
RESULT = x.softmax(axis=0).tolist()
print(RESULT)
