# On the host, in a second terminal, where you saved check_acceptance.py: into the running container.
docker cp check_acceptance.py specdec-quickstart:/workspace/check_acceptance.py
