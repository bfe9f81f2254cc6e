import SignetCore
print(SignetCoreVersion.string)
