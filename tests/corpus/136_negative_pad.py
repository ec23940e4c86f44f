# negative padding shrinks, and pad then reduce
from tinygrad import Tensor
x = Tensor([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]).realize()
RESULT = {"neg": x.pad(((0, 0), (-1, 1))).tolist(), "both": x.pad(((1, -1), (2, -2))).tolist()}
print(RESULT)
