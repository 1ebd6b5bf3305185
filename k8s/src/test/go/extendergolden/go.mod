module gpupool.io/extendergolden

go 1.19
