# three matrices multiplied: (a @ b) @ c, the middle result is realized
from tinygrad import Tensor
a = Tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]).realize()
b = Tensor([[1.0, 0.0, -1.0], [2.0, 1.0, 0.0]]).realize()
c = Tensor([[1.0], [2.0], [3.0]]).realize()
RESULT = ((a @ b) @ c).tolist()
print(RESULT)
