# On the host: stops Triton and the container (--rm removes it; the weights stay in the cache).
docker stop specdec-quickstart
