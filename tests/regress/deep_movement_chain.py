# timeout: 300
# sanitized: skip a minute and more under the sanitizers; deep_movement_chain_short.py is the same chain, 400 views
# 20,000 reshape/permute views of one tensor (once a stack overflow, then quadratic: each view re-simplified the
# whole index expression, and LLVM's X86 domain reassignment and machine scheduler are quadratic in the one long
# block the kernel becomes). The index permutation i -> (i%3)*2 + i//3 has period 4, 8 views: 20,000 views are the
# identity, worked out by hand. The reference takes 89 s for 1,000 views on this machine kind.
from tinygrad import Tensor
x = Tensor.arange(6).reshape(2, 3).float()
for i in range(20000): x = x.reshape(3, 2) if i % 2 == 0 else x.permute(1, 0)
print(x.tolist())
