# error: the devices are CPU, CPU:LLVM, INTERP
# devices: CUDA GPU VULKAN
# DEV naming no device is an error before anything runs
print("ran")
