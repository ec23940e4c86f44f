# uniform(low, high) and randint(low, high) from one seed
from tinygrad import Tensor
Tensor.manual_seed(7)
RESULT = {"uniform": Tensor.uniform(2, 3, low=-1.0, high=2.0).tolist(), "randint": Tensor.randint(6, low=0, high=5).tolist()}
print(RESULT)
