# None, Ellipsis and negative indexing, squeeze/unsqueeze/flatten views
from tinygrad import Tensor
x = Tensor([[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]]).realize()
RESULT = {"none": x[None, 0].tolist(), "ell": x[..., 1].tolist(), "neg": x[-1, -1].tolist(), "flat": x.flatten().tolist(),
          "sq": x[:, :1].squeeze(1).tolist(), "unsq": x[0, 0].unsqueeze(0).tolist()}
print(RESULT)
