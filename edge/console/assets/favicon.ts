/**
 * The console's icon: a play triangle on the accent colour. SVG, so one small file serves every
 * size, and no inline code, so the pages' `img-src 'self'` covers it.
 */
export const favicon = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#0b5cad"/><path d="M12 9v14l11-7z" fill="#fff"/></svg>
`;
