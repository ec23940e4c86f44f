# flat argmax of a 4x8 and max+sum scalar fusion
from tinygrad import Tensor
x = Tensor([[float((i * 8 + j) * 13 % 29) for j in range(8)] for i in range(4)]).realize()
RESULT = {"am": x.argmax().item(), "sm": (x.sum() - x.max()).item()}
print(RESULT)
