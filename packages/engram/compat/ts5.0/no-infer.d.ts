// TypeScript before 5.4 has no `NoInfer`, which zod 4's declarations use; a project that checks
// library declarations (`skipLibCheck: false`) then fails inside zod. `NoInfer` only steers
// inference, so the identity type is enough to check them. Loaded only by TypeScript < 5.4 (the
// `types@<5.4` conditions of package.json); newer versions have their own.
export {};
declare global {
  type NoInfer<T> = T;
}
