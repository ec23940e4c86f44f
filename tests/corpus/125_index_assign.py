# one-hot gather from a 2-d index tensor, and take along an axis
from tinygrad import Tensor
x = Tensor([10.0, 20.0, 30.0, 40.0, 50.0]).realize()
i = Tensor([[4, 0], [2, 2]])
RESULT = {"g": x[i].tolist()}
print(RESULT)
